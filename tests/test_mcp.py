"""``bankproof mcp`` driven by the MCP SDK's own client over stdio: the server starts, lists its
seven tools with argument schemas, answers each with the JSON its command prints with ``--json``
(timings aside), and answers bad arguments as tool errors naming the field."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from bankproof.verifier.cli.main import main

mcp = pytest.importorskip("mcp", reason="the mcp extra (make test installs it)")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
LOOSE = ("seconds", "witness_lanes")  # timings, and the lanes a Z3 model names (valid ones; a process
# that ran other queries first may be given others)


def _plain(x):
    if isinstance(x, dict):
        out = {k: _plain(v) for k, v in x.items() if k not in LOOSE}
        if "smt_synthesis" in out and isinstance(out["smt_synthesis"], dict):  # Z3's own layout: any
            out["smt_synthesis"].pop("offset", None)  # one at the cost (its enumerated cost is compared)
        return out
    if isinstance(x, list):
        return [_plain(v) for v in x]
    return x


def _cli(capsys, argv: list[str], name: str | None = None, server: str = "<mcp>") -> dict:
    """What ``bankproof ARGV --json`` prints, parsed (``name``: the file's name, replaced by what
    the server, which reads text and not files, calls it)."""
    main([*argv, "--json"])
    out = capsys.readouterr().out
    if name is not None:
        out = out.replace(json.dumps(name)[1:-1], server)
    return json.loads(out)


def _session_calls(calls: list[tuple[str, dict]]):
    """(tool names with their input properties, each call's (is_error, structured content, text))."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def run():
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "bankproof.verifier.cli.main", "mcp"]
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            tools = {t.name: sorted(t.input_schema["properties"]) for t in listed.tools}
            answers = []
            for name, arguments in calls:
                r = await session.call_tool(name, arguments)
                answers.append((r.is_error, r.structured_content, " ".join(c.text for c in r.content)))
            return tools, answers

    return anyio.run(run)


GOOD = [
    ("verify", {"spec": (EXAMPLES / "transpose_16x32_xor_m.toml").read_text()}),
    ("synth", {"spec": (EXAMPLES / "transpose_16x32_plain.toml").read_text()}),
    ("convert", {"spec": (EXAMPLES / "convert_blocked_transpose.toml").read_text()}),
    ("agree", {"spec": (EXAMPLES / "engines" / "emmy_200.toml").read_text()}),
    (
        "wavefronts",
        {
            "cases": [
                {"instr": "ld32", "byte_offsets": [4 * (i % 16) * 33 for i in range(32)]},
                {"instr": "ldsm.x4", "byte_offsets": [16 * i for i in range(32)]},
            ]
        },
    ),  # fmt: skip
    ("kernel", {"source": (EXAMPLES / "triton" / "strided_sum.ptx").read_text(), "language": "ptx"}),
    (
        "kernel",
        {
            "source": (ROOT / "tests" / "test_kernel_buffers.py")
            .read_text()
            .split('PTX = """')[1]
            .split('"""')[0],
            "language": "ptx",
            "block": 32,
            "buffers": {
                "lens": {"dtype": "int32", "values": [5, 7]},
                "perm": {"dtype": "int32", "values": list(range(32))},
                "bias": None,
            },
        },
    ),  # fmt: skip
    ("triton_scan", {"ttgir": (ROOT / "verifier" / "triton" / "sample.ttgir").read_text()}),
]
BAD = [
    ("verify", {"spec": {"shape": [32]}}, "verify: spec: dtype is missing"),
    ("synth", {"spec": "shape = [16, 32"}, "synth: spec: spec is not valid TOML"),
    ("convert", {"spec": {"shape": [16, 32], "dtype": "f32"}}, "convert:"),
    ("agree", {"spec": {"dtype": "f16", "writer": {}, "reader": {}, "colour": 1}}, "colour is not a field"),
    ("wavefronts", {"cases": [{"instr": "ld32", "byte_offsets": [1]}]}, "byte_offsets must be a list of 32"),
    ("wavefronts", {"cases": []}, "cases must be a non-empty list"),
    (
        "kernel",
        {"source": ".version 8.0", "language": "fortran"},
        "kernel: kernel: language must be ptx or cuda",
    ),
    ("triton_scan", {"ttgir": ""}, "ttgir must be non-empty text"),
    ("verify", {"spec": {"shape": [32], "dtype": "f32"}, "engines": "magic"}, "engines must be one of"),
]


@pytest.mark.slow
def test_the_server_lists_and_answers_every_tool_as_its_command_does(capsys, tmp_path):
    tools, answers = _session_calls([(n, a) for n, a in GOOD] + [(n, a) for n, a, _ in BAD])
    assert tools == {
        "agree": ["base", "spec", "timeout"], "convert": ["spec", "timeout"],
        "kernel": ["arch", "args", "block", "buffers", "grid", "headers", "kernel", "language", "source"],
        "synth": ["engines", "padded", "spec", "timeout", "weights"],
        "triton_scan": ["args", "buffers", "ptx", "ttgir"],
        "verify": ["engines", "spec", "timeout"], "wavefronts": ["arch", "cases"],
    }  # fmt: skip
    good, bad = answers[: len(GOOD)], answers[len(GOOD) :]
    assert not any(is_error for is_error, _, _ in good), [t for e, _, t in good if e]
    got: dict = {}
    for (name, _), (_, content, _) in zip(GOOD, good, strict=True):
        got.setdefault(name, _plain(content))  # the first call of each tool; the launch data's below
    with_data = _plain(good[[n for n, _ in GOOD].index("kernel") + 1][1])
    assert with_data["verdict"] == "refuted" and [i["instructions"] for i in with_data["instructions"]][
        :1
    ] == [5]
    spec = str(EXAMPLES / "transpose_16x32_xor_m.toml")
    assert got["verify"] == _plain(_cli(capsys, ["verify", spec], spec, "<spec>"))
    assert got["verify"]["verdict"] == "refuted" and got["verify"]["accesses"][1]["conflict"]["lanes"]
    spec = str(EXAMPLES / "transpose_16x32_plain.toml")
    assert got["synth"] == _plain(_cli(capsys, ["synth", spec], spec, "<spec>"))
    spec = str(EXAMPLES / "convert_blocked_transpose.toml")
    assert got["convert"] == _plain(_cli(capsys, ["convert", spec], spec, "<spec>"))
    spec = str(EXAMPLES / "engines" / "emmy_200.toml")
    agree = _cli(capsys, ["agree", spec], spec)
    assert got["agree"] == _plain(agree)
    lines = tmp_path / "cases.jsonl"
    lines.write_text("\n".join(json.dumps(c) for c in GOOD[4][1]["cases"]) + "\n")
    main(["wavefronts", "--input", str(lines)])
    want = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert got["wavefronts"] == {"results": want}
    ptx = EXAMPLES / "triton" / "strided_sum.ptx"
    assert got["kernel"] == _plain(_cli(capsys, ["kernel", str(ptx)], str(ptx), "<text>"))
    ttgir = ROOT / "verifier" / "triton" / "sample.ttgir"
    assert got["triton_scan"] == _plain(_cli(capsys, ["triton", "scan", str(ttgir)], str(ttgir)))
    for (name, arguments, message), (is_error, content, text) in zip(BAD, bad, strict=True):
        assert message in text and "Traceback" not in text, (name, text)
        if name == "wavefronts" and arguments["cases"]:  # a bad case answered in its place, not the call
            assert not is_error and content["results"][0]["line"] == 1
        else:
            assert is_error, (name, text)


def test_tools_fuzzed_answer_or_refuse():
    """Random arguments of every type for every tool (called in process, as the server calls
    them): each returns the command's JSON or raises an InputError naming a field, nothing else."""
    import random

    from bankproof.models.errors import InputError
    from bankproof.verifier.agents.mcp_server import TOOLS

    rng = random.Random(1)
    junk = [None, 0, -1, 1 << 70, 3.5, float("nan"), "", "x" * 50, "[[[", {}, [], [1, 2], {"a": 1},
            {"shape": [32], "dtype": "f32"}, "shape = [32]\ndtype = 'f32'", [{"instr": "ld32"}],
            (EXAMPLES / "transpose_16x32_plain.toml").read_text(), ".version 8.0\n.target sm_90\n"]  # fmt: skip
    buffers = [None, "x", {"lens": {"dtype": "int32", "values": [3, 5]}}, {"lens": {"dtype": "complex", "values": "x"}},
               {"lens": None}, {"lens": {"dtype": "int8", "values": [1000]}}, {"lens": 3}]  # fmt: skip
    params = {"verify": ["spec", "engines", "timeout"], "synth": ["spec", "engines", "timeout", "padded", "weights"],
              "convert": ["spec", "timeout"], "agree": ["spec", "base", "timeout"],
              "wavefronts": ["cases", "arch"], "kernel": ["source", "language", "kernel", "block", "args", "buffers"],
              "triton_scan": ["ttgir", "ptx", "args", "buffers"]}  # fmt: skip
    answered = refused = 0
    for _ in range(160):
        name = rng.choice(sorted(TOOLS))
        kwargs = {p: rng.choice(junk) for p in params[name] if rng.random() < 0.7 and p != "buffers"}
        if rng.random() < 0.5 and "buffers" in params[name]:
            kwargs["buffers"] = rng.choice(buffers)
        if name == "kernel":
            kwargs["language"] = rng.choice(["ptx", "fortran", None])  # no NVRTC compile of junk here
        first = params[name][0]
        kwargs.setdefault(first, rng.choice(junk))
        try:
            out = TOOLS[name](**kwargs)
        except InputError as e:
            assert e.where and e.field, (name, kwargs)
            refused += 1
        else:
            assert isinstance(out, dict) and json.dumps(out)
            answered += 1
    assert answered and refused
