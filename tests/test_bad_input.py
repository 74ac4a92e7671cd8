"""Bad input cannot break bankproof: every malformed spec, notation, CLI argument and JSONL line
below exits 2 with one message naming the field, never a traceback."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from bankproof.verifier.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
PLAIN = str(ROOT / "examples" / "transpose_16x32_plain.toml")
HEAD = "shape = [16, 32]\ndtype = 'f32'\n"
MEM = "[memory]\nformula = '32*m + n'\n"
LANES = "lane = [[0, 2], [0, 4], [0, 8], [0, 16], [1, 0]]"
ACCESS = f"[[access]]\nkind = 'load'\nlayout.bases = {{register = [[0, 1]], {LANES}}}\n"
BLOCKED = (
    "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>"
)

SPECS = [
    ("", "spec: shape is missing"),
    ("shape = 5\ndtype = 'f32'\n", "spec: shape must be a list of integers, got 5"),
    (
        "shape = [12, 32]\ndtype = 'f32'\n" + MEM + ACCESS,
        "shape: value sizes must be powers of two, got 12x32",
    ),
    ("shape = [0, 32]\ndtype = 'f32'\n", "sizes must be powers of two, got 0x32"),
    (  # a formula evaluates every element: 2^24; bases and Triton's attributes: 2^30
        "shape = [8192, 8192]\ndtype = 'f32'\n[memory]\nformula = 'm + 8192*n'\n" + ACCESS,
        "over the limit of 2^24",
    ),
    (
        "shape = [1048576, 1048576]\ndtype = 'f32'\n[memory]\nformula = 'm + n'\n" + ACCESS,
        "over the limit of 2^30",
    ),
    ("shape = [16, 32]\ndtype = 'f13'\n", "dtype: name is unknown"),
    ("shape = [16, 32]\n", "spec: dtype is missing"),
    (
        HEAD + "arch = 'sm12'\n" + MEM + ACCESS,
        "spec: arch must be one of sm80, sm90, sm100, gfx942, gfx950, got sm12",
    ),
    (
        HEAD + "arch = []\n" + MEM + ACCESS,
        "spec: arch must be one of sm80, sm90, sm100, gfx942, gfx950, got []",
    ),  # found by fuzzing
    (
        HEAD + "[memory]\nformula = '32*m + n'\ntriton = 'x'\n" + ACCESS,
        "spec: memory must give exactly one of",
    ),
    (HEAD + "[memory]\nformula = 'n'\n" + ACCESS, "spec: memory.formula: formula: layout is not a bijection"),
    (
        HEAD + "[memory]\nformula = '32*m +'\n" + ACCESS,
        "spec: memory.formula: formula: text is not a valid expression",
    ),
    (HEAD + "[memory]\nformula = '__import__(\"os\")'\n" + ACCESS, "formula: text may only use dim names"),
    (
        HEAD + "[memory]\ncute = 'Sw<3,2> o (16,32):(32,1)'\n" + ACCESS,
        "spec: memory.cute: cute: swizzle must look like",
    ),
    (
        HEAD
        + "[memory]\ntriton = '#ttg.swizzled_shared<{vec = 3, perPhase = 1, maxPhase = 1, order = [1, 0]}>'\n"
        + ACCESS,
        "spec: memory.triton: swizzled_shared: vec must be a power of two, got 3",
    ),
    (
        HEAD + "[memory]\ntriton = '" + "#ttg.slice<{dim = 0, parent = " * 200 + "'\n" + ACCESS,
        "spec: memory.triton",
    ),
    (HEAD + MEM, "spec: access must list at least one [[access]]"),
    (
        HEAD + MEM + "[[access]]\nkind = 'rw'\nlayout.bases = {lane = []}\n",
        "spec: access[0].kind must be load or store",
    ),
    (
        HEAD + MEM + "[[access]]\nkind = 'load'\nlayout.bases = {lane = [[0, 1], [0, 2]]}\n",
        "spec: access[0].layout: has a 4-lane warp; sm90 warps have 32 lanes",
    ),
    # A store whose lane basis repeats: tensor bit m0 is never written, so nothing can be proved of
    # the elements it leaves out.
    (
        HEAD
        + MEM
        + "[[access]]\nkind = 'store'\nlayout.bases = {register = [[0, 1], [2, 0], [4, 0], [8, 0]], "
        + "lane = [[0, 2], [0, 4], [0, 8], [0, 16], [0, 16]]}\n",
        "spec: access[0].layout: layout never writes tensor bit(s) m0: the store does not cover the tensor "
        "(lane 4 repeats another basis or is zero)",
    ),
    # AMD's 64-lane warps parse (as in Triton 3.9.0); the bank model refuses them, naming the size.
    (
        HEAD
        + MEM
        + "[[access]]\nkind = 'load'\nlayout.triton = '#ttg.blocked<{sizePerThread = [1, 1], "
        + "threadsPerWarp = [2, 32], warpsPerCTA = [1, 1], order = [1, 0]}>'\n",
        "spec: access[0].layout: has a 64-lane warp; sm90 warps have 32 lanes",
    ),
    # Multi-CTA layouts: shared memory is per CTA, refused naming the block dimension.
    (
        HEAD
        + MEM
        + "[[access]]\nkind = 'load'\nlayout.triton = '#ttg.blocked<{sizePerThread = [1, 1], "
        + "threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0], CGALayout = [[8, 0]]}>'\n",
        "spec: access[0].layout: block bases are given (a multi-CTA layout): shared memory is per CTA",
    ),
    # ... and a memory layout split over CTAs (it used to read as "not invertible").
    (
        HEAD
        + "[memory]\ntriton = '#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, "
        + "elementBitWidth = 32, CGALayout = [[1, 0]]}>'\n"
        + ACCESS,
        "spec: memory.triton: block bases are given (a multi-CTA layout): shared memory is per CTA",
    ),
    (
        HEAD + MEM + f"[[access]]\nkind = 'load'\nlayout.bases = {{register = [[0, 64]], {LANES}}}\n",
        "register basis [0, 64] coordinate for dim1 must be in [0, 32), got 64",
    ),
    (
        HEAD
        + MEM
        + f"[[access]]\nkind = 'load'\ninstr = 'ld256'\nlayout.bases = {{register = [[0, 1]], {LANES}}}\n",
        "instr: name is not a known shared-memory instruction",
    ),
    (
        HEAD
        + MEM
        + f"[[access]]\nkind = 'load'\ninstr = 'ld128'\nlayout.bases = {{register = [[0, 1]], {LANES}}}\n",
        "spec: access[0] (access0): instr needs 4 consecutive registers",
    ),
    ("\x00\x01\x02", "spec: file is not valid TOML"),
]


@pytest.mark.parametrize(("text", "message"), SPECS)
def test_malformed_spec(tmp_path, capsys, text, message):
    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    assert main(["verify", str(spec)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


CLI = [
    ([], "the following arguments are required: COMMAND"),
    (["frobnicate"], "argument COMMAND: invalid choice: 'frobnicate'"),
    (["verify", PLAIN, "--engine", "magic"], "argument --engine/--engines: invalid choice: 'magic'"),
    (["verify", PLAIN, "--timeout", "-1"], "verify: --timeout must be between 0 and 3600 seconds, got -1.0"),
    (["layout", BLOCKED], "layout: --shape is required for Triton notations"),
    (["layout", BLOCKED, "--shape", "16xq"], "shape: value must look like 16x32"),
    (["gpu", PLAIN, "--repeat", "0"], "gpu: --repeat must be between 1 and 1000, got 0"),
    (
        ["triton", "corpus", "--arch", "sm70"],
        "triton corpus: --arch must be among sm80, sm90, sm100, gfx942, gfx950, got sm70",
    ),
    (["triton", "scan", "/nonexistent.ttgir"], "triton scan: FILE cannot be read"),
    (["synth", "/nonexistent.toml"], "spec: file cannot be read"),
    (["verify", PLAIN, "--html", "/nonexistent/page.html"], "verify: --html cannot be written"),
    (["show", PLAIN, "--color", "purple"], "argument --color: invalid choice: 'purple'"),
    (["show", PLAIN, "--svg", "/nonexistent/scope.svg"], "show: --svg cannot be written"),
    (["show", PLAIN, "--instruction", "-1"], "show: --instruction must be in [0, 16), got -1"),
]


@pytest.mark.parametrize(("args", "message"), CLI)
def test_malformed_command_line(capsys, args, message):
    with pytest.raises(SystemExit) as exit_info:
        raise SystemExit(main(args))
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


JSONL = [
    ("{", "line 1: json is not valid JSON"),
    ('{"byte_offsets": [0]}', "line 1: instr must be an instruction name, got None"),
    (
        json.dumps({"instr": "ld7", "byte_offsets": [0] * 32}),
        "line 1: instr is not a known shared-memory instruction",
    ),
    (
        '{"instr": "ld32", "byte_offsets": [0, 4]}',
        "line 1: byte_offsets must be a list of 32 integers, got 2",
    ),
    ('{"instr": "ld32", "byte_offsets": [-4]}', "line 1: byte_offsets must be a list of 32 integers"),
]


@pytest.mark.parametrize(("line", "message"), JSONL)
def test_malformed_jsonl_line(monkeypatch, capsys, line, message):
    monkeypatch.setattr(sys, "stdin", io.StringIO(line + "\n"))
    assert main(["wavefronts", "--input", "-"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_the_table_has_at_least_30_inputs():
    assert len(SPECS) + len(CLI) + len(JSONL) >= 30


# ----- found by hand and by the fuzzers (issue 27): each once crashed, hung or answered wrongly ------
NVMMA = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>"
API_CASES = [
    (lambda bp: bp.layout("+".join(["m"] * 1000), shape="16x32"), "formula: layout is not a bijection"),
    (lambda bp: bp.layout("m * 1099511627776 * 1024 + n", shape="16x32"), "beyond 2^40 (64-bit arithmetic would wrap)"),
    (lambda bp: bp.layout("(8,8):(1,9223372036854775808)"), "cute: layout has an integer beyond 2^40"),
    (lambda bp: bp.layout("#ttg.slice<{dim = 0, parent = " * 500 + BLOCKED + "}>" * 500, shape="16"), "nests deeper"),
    (lambda bp: bp.layout("32*m + n", shape=[2**20000, 32]), "an integer of 6021 digits"),
    (lambda bp: bp.layout("32*m + n", shape=7), "shape: value must be text like 16x32"),
    (lambda bp: bp.layout('{"offset": [[' + "9" * 5000 + "]]}", shape="16"), "bases: text has an integer of 5000 digits"),
    (lambda bp: bp.layout("Sw<3,464,3> o (8,64):(64,1)"), "cute: Swizzle fields must be at most 32"),
    (lambda bp: bp.show(spec=PLAIN, instruction="3"), "show: instruction must be an integer"),
    (lambda bp: bp.verify(NVMMA, load=BLOCKED, shape="64x64", dtype="f32"), "elementBitWidth contradicts the dtype f32"),
    (lambda bp: bp.wavefronts("ld32", None), "wavefronts: byte_offsets must be a list"),
    (lambda bp: bp.verify("32*m + n", load=BLOCKED, shape="16x32", dtype="f32", engines=None), "engines must be"),
    (lambda bp: bp.layout("tile_to_shape(Layout<Shape<_0,_64>,Stride<_64,_1>>{}, make_shape(_128{}, _64{}))"),
     "tile_to_shape: sizes must be at least 1"),
    (lambda bp: bp.verify(spec=_fa2(thr="(8,16):(-16,1)"), engines="enum"), "must each be a bijection"),
    (lambda bp: bp.verify(spec=_fa2(warps="(4,-1,1)"), engines="enum"), "warps sizes must be at least 1"),
]  # fmt: skip


def _fa2(**fields) -> dict:
    """The FA2 Q-tile example with fields of its copy (thr, val) or mma (warps) replaced."""
    import tomllib

    spec = tomllib.loads((ROOT / "examples" / "cute_fa2_q_128x128.toml").read_text())
    for acc in spec["access"]:
        part = acc["layout"].get("cute_copy") or acc["layout"].get("cute_mma")
        part.update({k: v for k, v in fields.items() if k in part})
    return spec


@pytest.mark.parametrize(("call", "message"), API_CASES)
def test_bad_api_input_is_an_input_error(call, message):
    import bankproof

    with pytest.raises(
        bankproof.InputError, match=message.replace("^", r"\^").replace("(", r"\(").replace(")", r"\)")
    ):
        call(bankproof)


def test_a_time_limit_below_what_z3_needs_is_unknown_never_proved():
    import bankproof

    rows = BLOCKED.replace("[1, 32], warpsPerCTA = [1, 1]", "[1, 32], warpsPerCTA = [4, 1]")
    cols = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 2], order = [0, 1]}>"
    r = bankproof.synth(store=rows, load=cols, shape="64x64", dtype="f16", timeout=1e-6, engines="z3")
    assert r.verdict == "unknown" and r.synth.optimal_over.startswith("unknown")
    v = bankproof.verify(spec=PLAIN, timeout=1e-9, engines="z3")
    assert v.verdict == "unknown" and {a.proof.reason for a in v.accesses} == {"solver: timeout"}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["triton", "corpus", "--arch", ""], "triton corpus: --arch names no arch"),
        (
            ["triton", "corpus", "--kernels", "/no/such/kernels.py", "--arch", "sm90"],
            "--kernels is not a file",
        ),
    ],
)
def test_corpus_arguments_are_checked_before_any_work(argv, message, capsys):
    assert main(argv) == 2 and message in capsys.readouterr().err


class _Hostile:
    """A user object whose str, repr and index raise (or would take forever)."""

    def __str__(self):
        raise RuntimeError("a user's __str__ failed")

    __repr__ = __str__

    def __index__(self):
        raise RuntimeError("a user's __index__ failed")


@pytest.mark.parametrize(
    "call",
    [
        lambda bp: bp.layout("32*m+n", shape=[_Hostile(), 32]),
        lambda bp: bp.layout("32*m+n", shape="16x32", dtype=_Hostile()),
        lambda bp: bp.layout(_Hostile(), shape="16x32"),
        lambda bp: bp.verify(
            "32*m+n", load={"lane": [_Hostile()]}, shape="16x32", dtype="f32", engines="enum"
        ),
        lambda bp: bp.verify("32*m+n", load=BLOCKED, shape="16x32", dtype="f32", timeout=_Hostile()),
        lambda bp: bp.wavefronts(_Hostile(), [0] * 32),
    ],
)
def test_a_hostile_object_is_an_input_error_and_never_formatted(call):
    import bankproof

    with pytest.raises(bankproof.InputError) as e:
        call(bankproof)
    assert "_Hostile" in str(e.value) or "must" in str(e.value)
