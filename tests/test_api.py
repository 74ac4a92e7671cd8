"""The Python API: every CLI command's ``--json`` is the API result's ``to_json()``; layouts are
accepted as notation strings, ``LinearLayout``s and plain bases alike; bad input raises
``InputError`` with the CLI's message."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest
from bankproof.verifier.cli.main import main
from hypothesis import given, settings
from hypothesis import strategies as st

import bankproof
from tests.strategies import distributed, memory, shapes

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))
ROWS = (
    "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>"
)
COLS = {"register": [[0, 2], [0, 4], [0, 8], [0, 16]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]]}


# The SMT synthesis runs under a time limit (a few seconds of its 10 may be used), so whether it
# finishes depends on the machine's load; its layout is any satisfying model.
MODEL_DEPENDENT = {"seconds", "smt_synthesis", "witness_lanes"}


def _untimed(value):
    """Seconds differ between runs, and so may a Z3 model (the SMT-synthesized layout, a
    certificate's witness lanes: any satisfying one is right); everything else must be equal."""
    if isinstance(value, dict):
        return {k: 0 if k in MODEL_DEPENDENT else _untimed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _cli(capsys, monkeypatch, *argv: str) -> tuple[int, str, str]:
    monkeypatch.chdir(ROOT)
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _same(cli_out: str, api_json: str) -> None:
    assert api_json.endswith("\n") and cli_out.endswith("\n")
    assert _untimed(json.loads(cli_out)) == _untimed(json.loads(api_json))
    # key order too (the text is the same once the timings are)
    assert list(json.loads(cli_out)) == list(json.loads(api_json))


CALLS = {
    "verify": lambda rel: bankproof.verify(spec=rel),
    "synth": lambda rel: bankproof.synth(spec=rel),
    "explain": lambda rel: bankproof.explain(spec=rel),
    "show": lambda rel: bankproof.show(spec=rel),
    "convert": lambda rel: bankproof.convert(spec=rel),
}


@pytest.mark.slow
@pytest.mark.parametrize("command", list(CALLS))
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_cli_json_is_the_api_result(command, example, capsys, monkeypatch):
    rel = str(example.relative_to(ROOT))
    code, out, err = _cli(capsys, monkeypatch, command, rel, "--json")
    if code == 2:  # the API refuses it with the same message
        with pytest.raises(bankproof.InputError) as e:
            CALLS[command](rel)
        assert err == f"bankproof: {e.value}\n"
        return
    result = CALLS[command](rel)
    _same(out, result.to_json())
    if hasattr(result, "exit_code"):
        assert code == result.exit_code


def test_gpu_without_a_device_is_refused_alike(capsys, monkeypatch):
    """``gpu`` needs CuPy and a GPU: without them the command and the API refuse alike."""
    import importlib.util

    from bankproof.verifier.api import gpu
    from bankproof.verifier.api import spec_file as spec

    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed here; this checks the refusal without it")
    rel = "examples/transpose_16x32_xor_2m.toml"
    code, _, err = _cli(capsys, monkeypatch, "gpu", rel, "--json")
    with pytest.raises(bankproof.InputError) as e:
        gpu.gpu_check(spec.load_spec(ROOT / rel))
    assert code == 2 and err == f"bankproof: {e.value}\n" and "needs CuPy and a CUDA GPU" in err


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_layout_json_is_the_api_result(example, capsys, monkeypatch):
    """``bankproof layout`` of each example's memory notation and of its first access's layout."""
    import tomllib

    spec = tomllib.loads(example.read_text())
    shape = "x".join(map(str, spec["shape"]))
    texts = [v for k, v in spec["memory"].items() if k in ("triton", "cute", "formula")]
    texts += [a["layout"]["triton"] for a in spec["access"][:1] if "triton" in a["layout"]]
    units = spec["memory"].get("units", "element")
    for text in texts:
        extra = ["--units", units] if text.startswith(("Sw", "(")) else []
        align = spec["memory"].get("base_align", 0)
        extra += ["--base-align", str(align)] if extra else []
        code, out, _ = _cli(capsys, monkeypatch, "layout", text, "--shape", shape, "--dtype", spec["dtype"],
                            *extra, "--json")  # fmt: skip
        assert code == 0
        kw = {"units": units, "base_align": align} if extra else {}
        _same(out, bankproof.layout(text, shape=shape, dtype=spec["dtype"], **kw).to_json())


@pytest.mark.parametrize("ttgir", ["verifier/triton/sample.ttgir", "tests/data/matmul_pipelined_sm80.ttgir"])
def test_scan_json_is_the_api_result(ttgir, capsys, monkeypatch):
    code, out, _ = _cli(capsys, monkeypatch, "triton", "scan", ttgir, "--json")
    result = bankproof.scan_ttgir((ROOT / ttgir).read_text(), path=ttgir)
    assert out == result.to_json()
    assert code == int(result.worse)


def test_wavefronts_lines_are_the_api_results(capsys, monkeypatch, tmp_path):
    cases = [
        {"instr": "ld128", "byte_offsets": [0] * 32},
        {"instr": "st32", "byte_offsets": [128 * i for i in range(32)]},
        {"instr": "ld64", "byte_offsets": [8 * (i // 2) for i in range(32)]},
        {"instr": "ldsm.x4", "byte_offsets": [16 * i for i in range(32)]},
    ]
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    for arch in ("sm90", "sm80"):
        code, out, _ = _cli(capsys, monkeypatch, "wavefronts", "--input", str(path), "--arch", arch)
        assert code == 0
        want = "".join(
            bankproof.wavefronts(c["instr"], c["byte_offsets"], arch=arch).to_json() for c in cases
        )
        assert out == want
    assert bankproof.wavefronts("ld64", cases[2]["byte_offsets"], arch="sm80").rests_on == "unknown"


def test_results_are_frozen():
    r = bankproof.verify("32*m + (n ^ m)", store=ROWS, load=COLS, shape=(16, 32), dtype="f32", engines="enum")
    with pytest.raises(FrozenInstanceError):
        r.verdict = "proved"  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        r.accesses[1].conflict.lanes = (0, 1)  # type: ignore[misc]


def test_api_finds_the_seeds_conflict():
    r = bankproof.verify("32*m + (n ^ m)", store=ROWS, load=COLS, shape=(16, 32), dtype="f32")
    assert (r.verdict, r.exit_code, r.conflict_free) == ("refuted", 1, False)
    read = r.access("load")
    assert (read.wavefronts, read.ideal, read.state) == (32, 16, "2-way conflict")
    cx = read.conflict
    assert cx.lanes == (1, 16) and cx.coords == ({"m": 1, "n": 0}, {"m": 0, "n": 1}) and cx.bank == 1
    assert cx.reproduce.startswith('echo \'{"instr":"ld32"') and cx.reproduce.endswith(
        "| bankproof wavefronts --input -"
    )
    assert read.engines["algebra"].conflict_directions == ("n0⊕m0",)
    s = bankproof.synth(store=ROWS, load=COLS, shape=(16, 32), dtype="f32")
    assert s.notations["formula"] == "128*(n // 8) + 32*(m // 4) + ((4*(n % 8)) ^ (8*(m // 4))) + m % 4"
    assert s.synth.optimality.proof.status == "proved" and s.verdict == "proved"
    assert [(a.wavefronts, a.instructions) for a in s.accesses] == [(16, 4), (16, 16)]
    # the synthesized layout is a LinearLayout the API takes back
    again = bankproof.verify(s.layout, store=ROWS, load=COLS, shape=(16, 32), dtype="f32")
    assert again.verdict == "proved"


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_layout_forms_agree(data):
    """A layout as a ``LinearLayout``, as a bases dict and as a bases JSON string: same result."""
    shape = data.draw(shapes(5, 9))
    dist, mem = data.draw(distributed(shape)), data.draw(memory(shape))
    as_dict = {k: [list(b) for b in v] for k, v in dist.as_dict().items()}
    offsets = [list(b) for b in mem.as_dict()["offset"]]
    kw = {"shape": shape, "dtype": "f16", "engines": ("enumeration", "algebra")}
    a = bankproof.verify(mem, load=dist, **kw)
    b = bankproof.verify({"offset": offsets}, load=as_dict, **kw)
    c = bankproof.verify(json.dumps({"offset": offsets}), load=json.dumps(as_dict), **kw)
    strip = [("verdict", x.verdict, [(y.wavefronts, y.conflict) for y in x.accesses]) for x in (a, b, c)]
    assert strip[0] == strip[1] == strip[2]


BAD = [
    (lambda: bankproof.verify("32*m + n", shape=(16, 32), dtype="f32"), "problem: accesses must give a store or load"),
    (lambda: bankproof.verify("32*m + n", load=COLS, dtype="f32"), "problem: shape is missing"),
    (lambda: bankproof.verify(3, load=COLS, shape=(16, 32), dtype="f32"), "memory: layout must be notation text"),
    (lambda: bankproof.verify("32*m + n", load=COLS, shape=(16, 32), dtype="f13"), "dtype: name is unknown"),
    (lambda: bankproof.verify("32*m + n", load=COLS, shape=(16, 32), dtype="f32", engines="fast"),
     "verify: engines must be one of enum, algebra, z3, all, got fast"),
    (lambda: bankproof.verify("32*m + n", load=COLS, shape=(16, 32), dtype="f32", timeout=0),
     "verify: timeout must be between 0 and 3600 seconds, got 0"),
    (lambda: bankproof.verify("32*m + n", load=ROWS, shape=(16, 32), dtype="f32", spec="x.toml"),
     "problem: memory must not be given with spec"),
    (lambda: bankproof.verify(ROWS, load=COLS, shape=(16, 32), dtype="f32"),
     "memory: layout must be a memory (shared) layout"),
    (lambda: bankproof.verify("32*m + n", store={"register": [[0, 1], [2, 0], [4, 0], [8, 0]],
                                                 "lane": [[0, 2], [0, 4], [0, 8], [0, 16], [0, 16]]},
                              shape=(16, 32), dtype="f32"),
     "access[0]: layout never writes tensor bit(s) m0: the store does not cover the tensor"),
    (lambda: bankproof.verify("32*m + n", load="#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [2, 32], "
                              "warpsPerCTA = [1, 1], order = [1, 0]}>", shape=(16, 32), dtype="f32"),
     "access[0]: has a 64-lane warp; sm90 warps have 32 lanes"),
    (lambda: bankproof.wavefronts("ld32", [0] * 31), "wavefronts: byte_offsets must be a list of 32 integers, got 31"),
    (lambda: bankproof.wavefronts("ld99", [0] * 32), "wavefronts: instr is not a known shared-memory instruction"),
    (lambda: bankproof.wavefronts("ld32", [0] * 32, arch="sm70"), "wavefronts: arch must be one of"),
    (lambda: bankproof.convert(ROWS, shape=(16, 32), dtype="f32"), "convert: source/destination must both be given"),
    (lambda: bankproof.scan_ttgir(5), "scan_ttgir: text must be TTGIR text"),
    (lambda: bankproof.layout("#ttg.blocked<{sizePerThread = [1]}>", shape="32"), "blocked: threadsPerWarp is missing"),
]  # fmt: skip


@pytest.mark.parametrize(("call", "message"), BAD)
def test_bad_input_raises_input_error_naming_the_field(call, message):
    with pytest.raises(bankproof.InputError) as e:
        call()
    assert str(e.value).startswith(message) or message in str(e.value), str(e.value)


def test_public_names_have_doctest_examples():
    for name in ("layout", "verify", "synth", "explain", "convert", "scan_ttgir", "wavefronts", "show"):
        fn = getattr(bankproof, name)
        assert ">>> " in (fn.__doc__ or ""), name
        assert fn.__annotations__.get("return"), name


SUBJECTS = {  # what each public function is about (positional); everything else is keyword-only
    "agree": ("writer", "reader"),
    "capture": ("folder",),
    "replay": ("folder",),
    "convert": ("source", "destination"),
    "explain": (),
    "kernel": ("source",),
    "kernel_open": ("source", "open_arg"),
    "kernel_numba": ("fn", "signature"),
    "kernel_cute": ("fn", "arguments"),
    "layout": ("notation",),
    "problem": ("memory",),
    "scan_ttgir": ("text",),
    "show": ("memory",),
    "synth": (),
    "verify": ("memory",),
    "verify_many": ("memories",),
    "wavefronts": ("instr", "byte_offsets"),
}


def test_every_api_function_takes_its_subject_by_position_and_the_rest_by_keyword():
    """One signature style: the thing asked about may be given by position, every option only by
    name (so options can be added or reordered without breaking a caller). A new public function
    must say which are its subjects here."""
    import inspect

    functions = {
        n: getattr(bankproof, n)
        for n in bankproof.__all__
        if inspect.isfunction(getattr(bankproof, n)) or inspect.isroutine(getattr(bankproof, n))
    }
    assert set(functions) == set(SUBJECTS)
    for name, fn in functions.items():
        params = inspect.signature(fn).parameters.values()
        positional = tuple(p.name for p in params if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD)
        assert positional == SUBJECTS[name], name
        assert all(p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in params), name


def test_scan_ttgir_args_need_the_ptx():
    text = (ROOT / "verifier" / "triton" / "sample.ttgir").read_text()
    with pytest.raises(bankproof.InputError, match="args needs ptx"):
        bankproof.scan_ttgir(text, args={"K": 1})
    with pytest.raises(TypeError):
        bankproof.scan_ttgir(text, "sample.ttgir")  # the path by name only


def test_agree_takes_a_spec_as_the_other_functions_do(tmp_path, capsys, monkeypatch):
    """``agree(spec=...)``: an agree spec file's path or its table, as ``bankproof agree`` reads it;
    a field given beside it is refused, naming it."""
    monkeypatch.chdir(ROOT)
    path = "examples/engines/tma_wgmma_offset.toml"
    r = bankproof.agree(spec=path)
    assert main(["agree", path, "--json"]) == r.exit_code
    _same(capsys.readouterr().out, r.to_json())
    from bankproof.verifier.api.spec_file import tomllib

    table = tomllib.loads((ROOT / path).read_text())
    by_table = bankproof.agree(spec=table, base=128)
    assert by_table.spec == "<api>" and by_table.base == 128
    with pytest.raises(bankproof.InputError, match="agree: dtype must not be given with spec"):
        bankproof.agree(spec=table, dtype="f16")
    with pytest.raises(bankproof.InputError, match="agree: writer is missing"):
        bankproof.agree(reader={"tma": "128B", "box": [8, 64]}, dtype="f16")
