"""``bankproof mcp`` over raw JSON-RPC lines, as a client that is not the SDK's sends them: every
line is answered (a parse error with -32700 and id null, a non-request with -32600, arguments
nested past the bound with a tool error naming the argument), types are as strict as the API's
(``true`` is not 1), a CUDA source cannot make an answer quote the server's files or environment,
and closing stdin ends the server at once, a long call pending or not; the guard fuzzed."""

from __future__ import annotations

import json
import os
import random
import select
import subprocess
import sys
import time

import pytest
from bankproof.verifier.agents.stdio_guard import MAX_DEPTH, check, depth

pytest.importorskip("mcp", reason="the mcp extra (make test installs it)")

SLOW_PTX = """.visible .entry k()
{
 .reg .b32 %r<4>; .reg .pred %p<2>;
 .shared .align 4 .b8 buf[4096];
 mov.u32 %r1, 0;
 mov.u32 %r2, buf;
$L: add.s32 %r1, %r1, 1;
 st.shared.u32 [%r2], %r1;
 setp.lt.u32 %p1, %r1, 100000000;
 @%p1 bra $L;
 ret;
}"""


class Client:
    def __init__(self, env: dict | None = None) -> None:
        self.p = subprocess.Popen(
            [sys.executable, "-m", "bankproof.verifier.cli.main", "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})  # fmt: skip
        assert self.recv()["id"] == 0
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, obj) -> None:
        self.p.stdin.write((obj if isinstance(obj, bytes) else json.dumps(obj).encode()) + b"\n")
        self.p.stdin.flush()

    def recv(self, seconds: float = 30) -> dict:
        ready, _, _ = select.select([self.p.stdout], [], [], seconds)
        assert ready, "no answer"
        return json.loads(self.p.stdout.readline())

    def call(self, ident: int, name: str, arguments: dict) -> dict:
        self.send({"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                   "params": {"name": name, "arguments": arguments}})  # fmt: skip
        return self.recv(120)

    def close(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()


@pytest.mark.slow
def test_every_line_is_answered():
    c = Client()
    try:
        c.send(b"not json {")
        assert c.recv() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "Parse error: the line is not JSON"},
        }
        c.send(b"[1, 2]")
        r = c.recv()
        assert r["error"]["code"] == -32600 and r["id"] is None
        deep = json.loads("[" * 300 + "]" * 300)
        r = c.call(3, "kernel", {"source": ".version 8.0\n", "language": "ptx", "args": deep})
        assert r["id"] == 3 and r["result"]["isError"]
        assert r["result"]["content"][0]["text"] == f"kernel: args nests deeper than {MAX_DEPTH} levels"
        r = c.call(4, "kernel", {"source": SLOW_PTX, "language": "ptx", "block": True})
        assert r["result"]["isError"] and "block" in r["result"]["content"][0]["text"]
        r = c.call(5, "synth", {"spec": {"shape": [16, 32]}, "padded": 1})
        assert r["result"]["isError"] and "padded" in r["result"]["content"][0]["text"]
        r = c.call(
            6, "wavefronts", {"cases": [{"instr": "ld32", "byte_offsets": [4 * i for i in range(32)]}]}
        )
        assert not r["result"].get("isError") and r["id"] == 6  # the server still answers
    finally:
        c.close()


@pytest.mark.slow
def test_no_answer_quotes_the_servers_files_or_environment(tmp_path):
    env = {**os.environ, "BANKPROOF_AGENT_KEY": "agent-secret-4f2a"}
    secret = tmp_path / "secret.h"
    secret.write_text("agent-secret-4f2a in a file\n")
    c = Client(env)
    try:
        spellings = ['#include "/proc/self/environ"\n', "%:include </proc/self/environ>\n",
                     '#inc\\\nlude "../../../../proc/self/environ"\n', f'/* x */ # include "{secret}"\n',
                     f'#include_next <{secret}>\n', f'#if __has_include("{secret}")\n#error found\n#endif\n']  # fmt: skip
        for n, source in enumerate(spellings):
            r = c.call(10 + n, "kernel", {"source": source, "language": "cuda"})
            text = json.dumps(r)
            if "__has_include" in source:  # answers false: compiles, no #error
                assert "found" not in text
            else:
                assert r["result"]["isError"] and "not given" in text
            assert "agent-secret" not in text and "BANKPROOF_AGENT_KEY" not in text
    finally:
        c.close()


@pytest.mark.slow
def test_closing_stdin_ends_a_pending_call_at_once():
    c = Client()
    try:
        c.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "kernel", "arguments": {"source": SLOW_PTX, "language": "ptx", "block": 1024}}})  # fmt: skip
        time.sleep(1.0)
        start = time.monotonic()
        c.p.stdin.close()
        c.p.wait(timeout=10)
        assert time.monotonic() - start < 5
    finally:
        c.close()


def test_the_guard_fuzzed():
    """Random lines: the guard answers or passes each, never raises; what it answers is JSON-RPC."""
    rng = random.Random(5)
    pieces = [b"{", b"}", b"[", b"]", b'"', b":", b",", b"1", b"null", b'"jsonrpc"', b'"2.0"', b'"id"',
              b'"method"', b'"tools/call"', b'"params"', b'"arguments"', b"\xff", b"\\u0000", b" "]  # fmt: skip
    for _ in range(3000):
        line = b"".join(rng.choice(pieces) for _ in range(rng.randrange(0, 30)))
        reply = check(line)
        if reply is not None:
            assert reply["jsonrpc"] == "2.0" and ("error" in reply or reply["result"]["isError"])
    assert check(b"[" * 100_000 + b"]" * 100_000)["error"]["code"] == -32600
    assert depth(json.loads("[" * 500 + "]" * 500)) == MAX_DEPTH + 1  # counted to the bound only
