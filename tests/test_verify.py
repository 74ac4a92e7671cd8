"""``bankproof verify`` with the enumeration engine: the seeds' examples, JSON schema, errors."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from bankproof.verifier.cli.main import main

import bankproof

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
REPORT_SCHEMA = json.loads(
    (EXAMPLES.parent / "verifier" / "schema" / "verify-report.schema.json").read_text()
)


def test_report_schema_is_valid_and_strict(capsys):
    """The published schema is a valid Draft 7 schema, accepts the error object, and rejects a
    report with an unknown verdict, a missing field or an extra one."""
    jsonschema.Draft7Validator.check_schema(REPORT_SCHEMA)
    assert main(["verify", "/nonexistent/spec.toml", "--json"]) == 2
    jsonschema.validate(json.loads(capsys.readouterr().out), REPORT_SCHEMA)
    main(["verify", str(EXAMPLES / "transpose_16x32_xor_m.toml"), "--json", "--engine", "enum"])
    rep = json.loads(capsys.readouterr().out)
    jsonschema.validate(rep, REPORT_SCHEMA)
    assert list(rep["accesses"][0]["engines"]) == ["enumeration"]
    bad = [
        {**rep, "verdict": "probably"},
        {k: v for k, v in rep.items() if k != "accesses"},
        {**rep, "extra": 1},
        {**rep, "accesses": [{**rep["accesses"][1], "counterexample": {"lanes": [1]}}]},
    ]
    for report in bad:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(report, REPORT_SCHEMA)


@pytest.mark.parametrize(
    ("name", "read_wavefronts", "code"),
    [("plain", 256, 1), ("xor_m", 32, 1), ("xor_2m", 16, 0)],
)
def test_seed_transpose_examples(name, read_wavefronts, code):
    """seeds/001: store 16 wavefronts for each swizzle; read 256 / 32 / 16 (through the API)."""
    rep = bankproof.verify(spec=EXAMPLES / f"transpose_16x32_{name}.toml")
    assert rep.exit_code == code
    store, read = rep.accesses
    assert (store.instructions, store.wavefronts, store.conflict_free) == (16, 16, True)
    assert (read.instructions, read.wavefronts, read.ideal) == (16, read_wavefronts, 16)
    assert read.instr == "ld32" and store.instr == "st32"
    assert rep.verdict == ("proved" if code == 0 else "refuted")


def test_xor_m_counterexample_is_the_bad_direction():
    """seeds/000: the classic swizzle's read conflicts along m0 xor n0."""
    cx = bankproof.verify(spec=EXAMPLES / "transpose_16x32_xor_m.toml").accesses[1].conflict
    a, b = cx.coords
    assert (a["m"] ^ b["m"], a["n"] ^ b["n"]) == (1, 1)
    assert cx.byte_addresses[0] // 4 % 32 == cx.byte_addresses[1] // 4 % 32 == cx.bank
    assert cx.byte_addresses[0] != cx.byte_addresses[1]
    replay = json.loads(cx.reproduce.split("'")[1])
    assert replay["byte_offsets"][cx.lanes[0]] == cx.byte_addresses[0]


@pytest.mark.parametrize(
    ("name", "directions"),
    [("plain", ["m0", "m1", "m2", "m3"]), ("xor_m", ["n0⊕m0"]), ("xor_2m", [])],
)
def test_seed_000_table_conflict_directions(name, directions):
    """seeds/000's table: span(M_Seg) ∩ span(B_Thr) is m0..m3 unswizzled, {m0 ⊕ n0} for XOR m,
    trivial for XOR 2m; the store's is always trivial."""
    rep = bankproof.verify(spec=EXAMPLES / f"transpose_16x32_{name}.toml", engines="algebra")
    store, read = rep.accesses
    assert store.engines["algebra"].conflict_directions == ()
    assert list(read.engines["algebra"].conflict_directions) == directions
    assert read.engines["algebra"].wavefronts == 16 * 2 ** len(directions)


def test_text_report(capsys):
    assert main(["verify", str(EXAMPLES / "transpose_16x32_xor_m.toml")]) == 1
    out = capsys.readouterr().out
    assert (
        "2-way conflict" in out
        and "counterexample: lanes 1 and 16" in out
        and "verdict: refuted (exit 1)" in out
    )
    why = "why (Lemma 9.4): lanes whose elements differ by n0⊕m0 hit the same bank in another segment"
    assert why in out


def test_vectorized_access_picks_widest(tmp_path, capsys):
    spec = tmp_path / "v.toml"
    spec.write_text("""
shape = [64, 64]
dtype = "f16"
[memory]
triton = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"
[[access]]
name = "store"
kind = "store"
layout.triton = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
""")
    assert main(["verify", str(spec), "--json"]) == 0
    a = json.loads(capsys.readouterr().out)["accesses"][0]
    assert a["instr"] == "st128" and a["vector"] == 8
    assert a["instructions"] == 4 * 4 and a["wavefronts"] == a["ideal"] == 16 * 4


BAD_SPECS = [
    ("shape = [16, 24]\ndtype='f32'", "shape: value sizes must be powers of two"),
    ("shape = [16, 32]\ndtype='f13'", "dtype: name is unknown"),
    ("shape = [16, 32]\ndtype='f32'\narch='sm70'", "spec: arch must be one of sm80, sm90, sm100"),
    ("shape = [16, 32]\ndtype='f32'", "spec: memory is missing"),
    (
        "shape = [16, 32]\ndtype='f32'\n[memory]\nformula='32*m+n'\ncute='(16,32):(32,1)'",
        "spec: memory must give exactly one of",
    ),
    ("shape = [16, 32]\ndtype='f32'\n[memory]\nformula='32*m+n'", "spec: access must list at least one"),
    (
        "shape = [16, 32]\ndtype='f32'\n[memory]\nformula='33*m+n'\n[[access]]\nkind='load'\nlayout.bases={lane=[]}",
        "spec: memory.formula: formula: layout is not a bijection",
    ),
    (
        "shape = [16, 32]\ndtype='f32'\n[memory]\nformula='32*m+n'\n[[access]]\nkind='read'\nlayout.bases={lane=[]}",
        "spec: access[0].kind must be load or store, got read",
    ),
    (
        "shape = [16, 32]\ndtype='f32'\n[memory]\nformula='32*m+n'\n[[access]]\nkind='load'\n"
        "layout.triton='#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 16], warpsPerCTA = [1, 1], order = [1, 0]}>'",
        "spec: access[0].layout: has a 16-lane warp; sm90 warps have 32 lanes",
    ),
    (
        "shape = [16, 32]\ndtype='f32'\n[memory]\nformula='32*m+n'\n[[access]]\nkind='load'\nlayout.bases={lane=[[1, 0]]}",
        "spec: access[0].layout: has a 2-lane warp; sm90 warps have 32 lanes",
    ),
    (
        "shape = [16, 32]\ndtype='f32'\n[memory]\nformula='32*m+n'\n[[access]]\nkind='load'\ninstr='ld128'\n"
        "layout.bases={register=[[1,0]], lane=[[0,1],[0,2],[0,4],[0,8],[0,16]]}",
        "spec: access[0] (access0): instr needs 4 consecutive registers",
    ),
    (
        (EXAMPLES / "mma_operand_a_ldmatrix.toml").read_text().replace("kWidth = 2", "kWidth = 4"),
        "spec: access[1] (operand_a): instr ldmatrix.sync.aligned.m8n8.x4.shared.b16 cannot deliver",
    ),
    ("shape = [16, 32]\ndtype='f32'\nfoo = 1", "spec: foo is not a spec field"),
    ("shape = [16, 32\n", "spec: file is not valid TOML"),
]


@pytest.mark.parametrize(("text", "message"), BAD_SPECS)
def test_bad_specs_exit_2(tmp_path, capsys, text, message):
    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    assert main(["verify", str(spec)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_missing_spec_file(capsys):
    assert main(["verify", "/nonexistent/spec.toml"]) == 2
    assert "spec: file cannot be read" in capsys.readouterr().err


from tests.test_cute_access import EXAMPLES as CUTE_EXAMPLES  # noqa: E402

EXPECTED_VERDICTS = {
    "amd_mi300_gemm_a_plain": "refuted",  # AMD: assumed (published) lane groups (tests/test_amd.py)
    "amd_mi300_gemm_a_padded": "refuted",
    "amd_mi300_gemm_a_swizzled": "proved",
    "amd_mi300_gemm_b_swizzled": "proved",
    "transpose_16x32_plain": "refuted",
    "transpose_16x32_xor_m": "refuted",
    "transpose_16x32_xor_2m": "proved",
    "convert_blocked_transpose": "refuted",
    "mma_operand_a_kwidth1": "refuted",
    "mma_operand_a_kwidth2": "proved",
    "mma_operand_a_kwidth4": "refuted",
    "mma_operand_a_kwidth8": "proved",
    "mma_operand_a_ldmatrix": "proved",
    "triton_tf32_b_operand_sm90": "refuted",
    "cute_sw323_8x8_row_read": "proved",
    "cute_plain_8x8_row_read": "refuted",
    "basetile_half_4x64": "proved",
    "basetile_half_8x32": "proved",
    "basetile_half_16x16": "proved",
    "basetile_float_4x32": "proved",
    "basetile_float_8x16": "proved",
    "basetile_float_16x8": "proved",
    "hopper_nvmma_128b_f16": "proved",
    "cute_sm90_epilogue_subtile_64x32": "proved",  # one store (tests/test_cute_epilogue_oracle.py)
    **{name: verdict for name, (_, _, verdict) in CUTE_EXAMPLES.items()},
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(p.stem for p in EXAMPLES.glob("*.toml")))
def test_every_example_has_its_expected_verdict(name):
    rep = json.loads(bankproof.verify(spec=EXAMPLES / f"{name}.toml").to_json())
    jsonschema.validate(rep, REPORT_SCHEMA)
    assert rep["verdict"] == EXPECTED_VERDICTS[name]
    for a in rep["accesses"]:
        answered = {
            e: r["wavefronts"] for e, r in a["engines"].items() if r["verdict"] in ("proved", "refuted")
        }
        others_na = all(r["verdict"] == "n/a" for e, r in a["engines"].items() if e != "enumeration")
        assert len(set(answered.values())) == 1 and (len(answered) >= 2 or others_na)  # n/a: padded on AMD


def test_broadcast_cga_is_checked_per_cta():
    """CGALayout = [[0, 0]]: every CTA holds the whole tensor, so one CTA's answer is each CTA's
    (the zero block bases are dropped); a split over CTAs is refused naming the block dim."""
    nvmma = "#ttg.nvmma_shared<{{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16{cga}}}>"
    blocked = "#ttg.blocked<{{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]{cga}}}>"
    kw = {"shape": (64, 64), "dtype": "f16"}
    one = bankproof.verify(nvmma.format(cga=""), store=blocked.format(cga=""), **kw)
    both = bankproof.verify(
        nvmma.format(cga=", CGALayout = [[0, 0]]"), store=blocked.format(cga=", CGALayout = [[0, 0]]"), **kw
    )
    assert [a.wavefronts for a in one.accesses] == [a.wavefronts for a in both.accesses] == [64]
    with pytest.raises(bankproof.InputError, match="access\\[0\\]: block bases are given"):
        bankproof.verify(nvmma.format(cga=""), store=blocked.format(cga=", CGALayout = [[32, 0]]"), **kw)


def test_verify_enumerates_each_access_once_even_with_the_html_page(tmp_path, monkeypatch, capsys):
    """One run builds each access's warp instructions once: the engines share them, and the
    HTML page's bank maps reuse them (the target keeps the last few)."""
    from bankproof.models import target

    built = []
    real = target.build_access

    def counting(dist, memory, *args):
        built.append(args)
        return real(dist, memory, *args)

    target.clear_caches()
    monkeypatch.setattr(target, "build_access", counting)
    spec = str(EXAMPLES / "transpose_16x32_xor_m.toml")
    assert main(["verify", spec, "--html", str(tmp_path / "r.html")]) == 1
    assert (tmp_path / "r.html").stat().st_size > 1000
    assert sorted(a[1] for a in built) == ["load", "store"]  # two accesses, one build each


@pytest.mark.parametrize("engines", ["all", "z3", "algebra", "enum"])
def test_paired_wide_loads_off_the_measured_arch_are_unknown_to_every_engine(engines):
    """A 128-bit load whose lane 0 and lane 1 share addresses merges phases on sm90 (measured);
    on sm80 that is not measured, so no engine may prove it (the algebra and Z3 once did)."""
    load = {"register": [[0, 1], [0, 2]], "lane": [[0, 0], [1, 0], [2, 0], [4, 0], [8, 0]]}
    r = bankproof.verify("4*m + n", load=load, shape="16x4", dtype="f32", arch="sm80", engines=engines)
    assert r.verdict == "unknown" and r.accesses[0].wavefronts is None
    assert {e.reason for e in r.accesses[0].engines.values()} == {
        "paired wide loads are measured on sm90 only"
    }
    assert (
        bankproof.verify("4*m + n", load=load, shape="16x4", dtype="f32", engines=engines).verdict == "proved"
    )


def test_show_says_when_the_arch_cannot_count_the_instruction():
    load = {"register": [[0, 1], [0, 2]], "lane": [[0, 0], [1, 0], [2, 0], [4, 0], [8, 0]]}
    r = bankproof.show("4*m + n", load=load, shape="16x4", dtype="f32", arch="sm80")
    assert r.unknown == "paired wide loads are measured on sm90 only"
    assert "group 0: ? wavefront(s)" in r.to_text()
    assert bankproof.show("4*m + n", load=load, shape="16x4", dtype="f32").unknown is None
