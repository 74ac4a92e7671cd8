"""The MCP server's stdio, guarded: every line the client sends is read here first, and the
server only sees requests it can answer.

- A line that is not JSON gets JSON-RPC 2.0's parse error (-32700, ``id`` null); one that is not a
  request object (a batch, a number) gets -32600.
- A line longer than :data:`MAX_LINE` bytes is refused (-32600) without being held whole.
- A ``tools/call`` whose arguments nest deeper than :data:`MAX_DEPTH` levels (or any request
  deeper than that) is answered here, as a tool error naming the argument: a client never waits
  for an answer that will not come.
- When the client closes the stream, the server ends at once, pending calls with it.

Answers reach stdout a whole line at a time (the server's and this guard's never interleave).

>>> deep = b"[" * 40 + b"1" + b"]" * 40
>>> call = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "kernel", "arguments": '
>>> check(call + b'{"args": ' + deep + b"}}}")["result"]["content"][0]["text"]
'kernel: args nests deeper than 32 levels'
>>> check(b"not json")["error"]["code"], check(b'{"jsonrpc": "2.0", "id": 2, "method": "ping"}')
(-32700, None)
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable

MAX_LINE = 16 << 20  # bytes of one request (a 1 MB text argument, escaped, fits)
MAX_DEPTH = 32  # levels of nesting of one argument (a spec as JSON nests 4)


def depth(value: object, limit: int = MAX_DEPTH + 1) -> int:
    """How deep ``value`` nests (a scalar is 0), counted up to ``limit`` without recursion.

    >>> depth(1), depth([1, {"a": [2]}])
    (0, 3)
    """
    deepest, todo = 0, [(value, 0)]
    while todo:
        v, d = todo.pop()
        deepest = max(deepest, d)
        if deepest >= limit:
            return deepest
        if isinstance(v, dict):
            todo += [(x, d + 1) for x in v.values()]
        elif isinstance(v, list):
            todo += [(x, d + 1) for x in v]
    return deepest


def _error(code: int, message: str, ident: object = None) -> dict:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


def check(line: bytes) -> dict | None:
    """The answer this guard gives ``line`` itself, or None where the server should have it."""
    if len(line) > MAX_LINE:
        return _error(-32600, f"Invalid Request: longer than {MAX_LINE} bytes")
    try:
        msg = json.loads(line)
    except RecursionError:
        return _error(-32600, f"Invalid Request: nests deeper than {MAX_DEPTH} levels")
    except ValueError:
        return _error(-32700, "Parse error: the line is not JSON")
    if not isinstance(msg, dict):
        return _error(-32600, "Invalid Request: must be one JSON-RPC object (batches are not taken)")
    ident = msg.get("id") if isinstance(msg.get("id"), (str, int)) else None
    params = msg.get("params")
    if (
        msg.get("method") == "tools/call"
        and isinstance(params, dict)
        and isinstance(params.get("arguments"), dict)
    ):
        tool = str(params.get("name"))[:64]
        for key, value in params["arguments"].items():
            if depth(value) > MAX_DEPTH:
                text = f"{tool}: {str(key)[:64]} nests deeper than {MAX_DEPTH} levels"
                return {"jsonrpc": "2.0", "id": ident, "result": {"content": [{"type": "text", "text": text}],
                                                                  "isError": True}}  # fmt: skip
    if depth(msg, MAX_DEPTH + 4) > MAX_DEPTH + 3:
        return _error(-32600, f"Invalid Request: nests deeper than {MAX_DEPTH} levels", ident)
    return None


def guarded(serve: Callable[[], None]) -> None:
    """Run ``serve`` (which reads fd 0 and writes fd 1) behind the guard."""
    client_in, client_out = os.dup(0), os.dup(1)
    to_server, server_out = os.pipe(), os.pipe()
    os.dup2(to_server[0], 0)
    os.dup2(server_out[1], 1)
    for fd in (to_server[0], server_out[1]):
        os.close(fd)
    lock = threading.Lock()

    def answer(obj: dict) -> None:
        data = (json.dumps(obj) + "\n").encode()
        with lock:
            _write_all(client_out, data)

    def inbound() -> None:
        with os.fdopen(client_in, "rb", buffering=1 << 16) as src, os.fdopen(to_server[1], "wb") as dst:
            while True:
                line = src.readline(MAX_LINE + 1)
                if not line:
                    break
                if len(line) > MAX_LINE and not line.endswith(b"\n"):
                    while (more := src.readline(1 << 20)) and not more.endswith(b"\n"):
                        pass  # the rest of an over-long line, dropped
                if not line.strip():
                    continue
                reply = check(line.rstrip(b"\r\n"))
                if reply is not None:
                    answer(reply)
                    continue
                try:
                    dst.write(line if line.endswith(b"\n") else line + b"\n")
                    dst.flush()
                except OSError:
                    break
        os._exit(0)  # the client is gone: every pending call ends now

    def outbound() -> None:
        with os.fdopen(server_out[0], "rb") as src:
            for line in src:
                with lock:
                    _write_all(client_out, line)

    threading.Thread(target=inbound, daemon=True, name="mcp-stdin").start()
    threading.Thread(target=outbound, daemon=True, name="mcp-stdout").start()
    serve()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


__all__ = ["check", "depth", "guarded", "MAX_LINE", "MAX_DEPTH"]
