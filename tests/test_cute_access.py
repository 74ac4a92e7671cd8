"""CuTe accesses: TV layouts, TiledCopy with copy atoms, TiledMMA fragments, the examples written
from CUTLASS's documented configurations, and their GPU record."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from bankproof.models.errors import InputError, Untranslatable
from bankproof.models.hardware import instruction
from bankproof.models.notation.cute_tiled_mma import mma_fragment
from bankproof.models.notation.cute_tv import copy_atom, tiled_copy, tv_to_layout
from bankproof.models.target_single import wavefronts
from bankproof.verifier.api.gpu import spec_case
from bankproof.verifier.api.spec_file import load_spec, parse_spec, tomllib

from bankproof import verify

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "gpu_checks" / "results"

# expected (store wavefronts, load wavefronts, verdict) of every CuTe example
EXAMPLES = {
    "cute_sm80_gemm_a_128x32": (64, 128, "proved"),
    "cute_sm80_gemm_a_128x64": (128, 256, "proved"),
    "cute_sm80_gemm_b_128x64": (128, 256, "proved"),
    "cute_fa2_q_128x128": (256, 256, "proved"),
    "cute_fa2_v_128x128": (256, 1024, "proved"),
    "cute_sm90_gmma_k_sw32_f16": (16, 16, "proved"),
    "cute_sm90_gmma_k_sw64_f16": (32, 32, "proved"),
    "cute_sm90_gmma_k_sw128_f16": (64, 64, "proved"),
    "cute_sm90_gmma_k_sw32_f8e4m3": (16, 16, "proved"),
    "cute_sm90_gmma_k_sw64_f8e4m3": (32, 32, "proved"),
    "cute_sm90_gmma_k_sw128_f8e4m3": (64, 64, "proved"),
    "cute_sm90_gmma_mn_sw32_f16": (64, 64, "proved"),
    "cute_sm90_gmma_mn_sw64_f16": (64, 64, "proved"),
    "cute_sm90_gmma_mn_sw128_f16": (64, 64, "proved"),
    "cute_sm90_epilogue_sw128_f16": (128, 128, "proved"),
    "cute_fa2_o_epilogue": (256, 256, "proved"),  # 32-bit stores of C, 128-bit loads (auto-vectorized)
    "cute_sm80_i8_gemm_a_128x64": (64, 128, "proved"),  # Tile<_32,_32,_32>, Swizzle<2,4,3> on bytes
    "cute_sm90_gmma_rs_a_f16": (128, 128, "proved"),  # RS A fragment via ldmatrix; smem_ptr honoured
    "cute_sm80_tf32_gemm_a_mmajor_128x32": (128, 512, "refuted"),  # CuTe's tf32 fragment: 2-way
    "cute_fa2_vt_128x64": (128, 512, "proved"),  # V read through FA2's composed view sVt
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_cute_examples_verify_with_their_expected_verdicts(name):
    """Written from CuTe notation alone (no bases): every engine agrees on the expected counts."""
    path = ROOT / "examples" / f"{name}.toml"
    assert "bases" not in path.read_text()
    r = verify(spec=path)
    st, ld, verdict = EXAMPLES[name]
    assert (r.accesses[0].wavefronts, r.accesses[1].wavefronts, r.verdict) == (st, ld, verdict)
    for a in r.accesses:
        assert {e.wavefronts for e in a.engines.values() if e.wavefronts is not None} == {a.wavefronts}


def test_unit_trap_example_reads_a_false_conflict_and_warns():
    """The SW128 atom as the DSL prints it, read in element units: a 2-way conflict that is not
    there, and the warning that says why."""
    path = ROOT / "examples" / "cute_sm90_gmma_k_sw128_f16.toml"
    text = path.read_text().replace('units = "byte"\nbase_align = 1024\n', "")
    text = text.replace("Sw<3,4,3> o smem_ptr[16b](unset) o", "S<3,4,3> o 0 o")
    r = verify(spec=tomllib.loads(text))
    assert r.verdict == "refuted" and r.accesses[1].state == "2-way conflict"
    assert "byte" in r.memory.warnings[0]


def test_gpu_record_of_the_cute_examples_replays():
    """Every example ran on an H100 (plus the cp.async.cg ones as .ca): data correct, Nsight
    Compute's wavefronts and instructions = what bankproof predicts today."""
    runs = json.loads((RESULTS / "h100-2026-11-23-cute-examples.json").read_text())["runs"]
    assert len(runs) == 22
    seen = 0
    for run in runs:
        assert run["data_mismatches"] == 0 and run["measured"] == run["predicted"], run["id"]
        name = Path(run["id"]).stem.removeprefix("ca_")
        if name in EXAMPLES:
            text = (ROOT / "examples" / f"{name}.toml").read_text()
            if run["id"].startswith("/tmp/ca/"):
                text = text.replace("SM80_CP_ASYNC_CACHEGLOBAL", "SM80_CP_ASYNC_CACHEALWAYS")
            case = spec_case(parse_spec(tomllib.loads(text), name))
            assert case["store"]["predicted"] == run["predicted"]["store"]
            assert case["load"]["predicted"] == run["predicted"]["load"]
            assert case["store"]["instr"] == run["store_instr"]
            seen += 1
    print(f"{seen} example runs re-predicted")
    assert seen == 20


def test_h200_record_of_every_cute_example_replays():
    """Every CuTe example (and each cp.async.cg one again as .ca) ran on an H200 on 2026-11-26:
    data correct and Nsight Compute's wavefronts and instructions = bankproof's prediction, the
    tf32 M-major example's 2-way conflict (512 load wavefronts) and FA2's sVt view included."""
    runs = json.loads((RESULTS / "h200-2026-11-26-cute-examples.json").read_text())["runs"]
    names = []
    for run in runs:
        assert run["data_mismatches"] == 0 and run["measured"] == run["predicted"], run["id"]
        name = Path(run["id"]).stem.removeprefix("ca_")
        if name not in EXAMPLES:
            continue
        text = (ROOT / "examples" / f"{name}.toml").read_text()
        if run["id"].startswith("/tmp/ca/"):
            text = text.replace("SM80_CP_ASYNC_CACHEGLOBAL", "SM80_CP_ASYNC_CACHEALWAYS")
        case = spec_case(parse_spec(tomllib.loads(text), name))
        assert (case["store"]["predicted"], case["load"]["predicted"]) == (
            run["predicted"]["store"], run["predicted"]["load"])  # fmt: skip
        assert case["store"]["instr"] == run["store_instr"]
        names.append(name)
    assert set(names) == set(EXAMPLES)  # every example measured
    tf32 = next(r for r in runs if "tf32_gemm_a_mmajor" in r["id"])
    assert tf32["measured"]["load"] == 512 == 2 * tf32["measured"]["load_instructions"]


def test_cp_async_phase_probes_replay():
    """16-byte cp.async.ca: lanes share a phase exactly when they are in the same 8-lane group
    (st.shared.v4's); cp.async.cg: no counter sees a lone probe's shared wavefronts."""
    d = json.loads((RESULTS / "h100-2026-11-23-cp-async-phases.json").read_text())
    ca, cg = d["metrics"][0], d["metrics"][1]
    pairs = 0
    for p in d["cp_async_phase_probes"]:
        if not p["family"].startswith("pair"):
            continue
        _, a, j = p["family"].split()
        warps = p["grid"][0] * p["grid"][1] // 32
        if p["mode"] == "ca16":
            same = int(a) // 8 == int(j) // 8
            assert p["metrics"][ca] == warps * (1 if same else 2), p["family"]
            offs = np.array(p["byte_offsets"])
            act = np.array([(p["mask"] >> i) & 1 for i in range(32)], dtype=bool)
            assert wavefronts("cp16.ca", offs, act).count == (1 if same else 2)
            pairs += 1
        else:
            assert p["metrics"][cg] == 0
    print(f"{pairs} cp.async.ca pair probes replayed")
    assert pairs == 248


def test_cp_async_cg_slows_with_the_span_of_one_instruction():
    """Timed (clock64, one warp): .ca costs the same on every conflict-free pattern; .cg slows
    once a warp's copies span more than one 512-byte block, though its wavefronts do not change."""
    rows = json.loads((RESULTS / "h100-2026-11-23-cp-async-spread-times.json").read_text())["timings"]
    t = {(r["pattern"], r["mode"]): r["cycles_per_copy"] for r in rows}
    one = [t[(p, "cg16")] for p in ("contiguous", "fa2 8 per row", "halves 256 apart")]
    two = [
        t[(p, "cg16")]
        for p in ("fa2 16 per row", "halves 512 apart", "halves 1024 apart", "phases 256 apart")
    ]
    assert max(one) * 1.25 < min(two)
    assert t[("phases 512 apart", "cg16")] > 4 * max(two)
    ca = {t[(p, "ca16")] for p in ("contiguous", "fa2 16 per row", "phases 512 apart")}
    assert max(ca) - min(ca) < 0.1


def test_tiled_copy_raked_product_and_atom_checks():
    acc = tiled_copy("Copy_Atom<UniversalCopy<uint64_t>, half_t>", "(8,4):(4,1)", "(1,4)", [8, 16], 16)
    # thread (m, n) holds the 1x4 block at (m, 4n): thread 1 starts at column 4
    assert acc.instr == "st64" and acc.layout.apply(register=0, lane=1, warp=0) == {"dim0": 0, "dim1": 4}
    with pytest.raises(InputError, match="moves 8 elements per thread but each thread holds 4"):
        tiled_copy("UniversalCopy<uint128_t>", "(8,4):(4,1)", "(1,4)", [8, 16], 16)
    with pytest.raises(InputError, match="SM75_U32x4_LDSM_N cannot store shared memory"):
        tiled_copy("SM75_U32x4_LDSM_N", "(32,1)", "(1,8)", [32, 8], 16)
    with pytest.raises(InputError, match="SM80_CP_ASYNC_CACHEGLOBAL copies uint128_t"):
        copy_atom("SM80_CP_ASYNC_CACHEGLOBAL<uint32_t>", 16)
    with pytest.raises(Untranslatable, match="is a real CuTe atom, but not one bankproof has"):
        copy_atom("SM100_TMEM_LOAD_32dp32b1x", 16)
    with pytest.raises(InputError, match="the nearest: SM75_U32x4_LDSM_N") as typo:
        copy_atom("SM75_U32x4_LDSM_M", 16)  # a typo: an input error, not an unread atom
    assert not isinstance(typo.value, Untranslatable)
    assert instruction(copy_atom("SM90_U16x8_STSM_T", 16).store).short == "stsm.x4.trans"


def test_tv_layout_matches_ptx_fragment_and_refuses_nonlinear():
    """m16n8k16's C fragment: lane l, register r holds (l // 4 + 8 * (r // 2), 2 * (l % 4) + r % 2)."""
    lay = tv_to_layout("((4,8),(2,2)):((32,1),(16,8))", [16, 8])
    for lane in range(32):
        for r in range(4):
            got = lay.apply(register=r, lane=lane, warp=0)
            assert (got["dim0"], got["dim1"]) == (lane // 4 + 8 * (r // 2), 2 * (lane % 4) + r % 2)
    with pytest.raises(InputError, match="not linear over F2"):
        tv_to_layout("(32,4):(1,48)", [32, 8])
    with pytest.raises(InputError, match="outside the 16x8 tile"):
        tv_to_layout("(32,4):(1,64)", [16, 8])


def test_mma_fragment_rejects_an_atom_that_cannot_deliver():
    """A 128-bit load needs 8 16-bit values at consecutive addresses; m16n8k16's A fragment holds
    pairs 8 rows and 8 columns apart, so UniversalCopy<uint128_t> is refused, naming the access."""
    spec = {"shape": [16, 16], "dtype": "f16", "memory": {"cute": "(16,16):(16,1)"},
            "access": [{"kind": "load", "layout": {"cute_mma": {"atom": "SM80_16x8x16_F16F16F16F16_TN",
                        "operand": "A", "copy": "UniversalCopy<uint128_t>"}}}]}  # fmt: skip
    with pytest.raises(InputError, match=r"access\[0\] \(access0\): instr needs 8 consecutive registers"):
        verify(spec=spec)
    acc = mma_fragment("SM80_16x8x16_F16F16F16F16_TN", "B", [64, 16], 16, copy="SM75_U32x2_LDSM_N")
    assert acc.instr == "ldsm.x2"


def test_spec_names_each_cute_access_field():
    base = {"shape": [32, 8], "dtype": "f16", "memory": {"cute": "(32,8):(8,1)"}}
    bad = [
        ({"cute_copy": {"atom": "UniversalCopy<uint32_t>"}}, "cute_copy must be a table with atom, thr"),
        ({"cute_tv": "(32,4):(1,32)", "tile": "x"}, "tile must be a list of integers"),
        ({"cute_mma": {"atom": "SM80_16x8x16_F16F16F16F16_TN", "operand": "D"}}, "operand must be A, B or C"),
        ({"cute_tv": "(32,8):(1,32)", "bases": {}}, "must give exactly one of"),
    ]
    for layout, message in bad:
        with pytest.raises(InputError, match=message):
            verify(spec={**base, "access": [{"kind": "load", "layout": layout}]})
    ok = {**base, "access": [{"kind": "store", "instr": "st32",
          "layout": {"cute_copy": {"atom": "UniversalCopy<uint64_t>", "thr": "(32,1)", "val": "(1,4)"}}}]}  # fmt: skip
    with pytest.raises(InputError, match="names st32 but the copy atom UniversalCopy<uint64_t> issues st64"):
        verify(spec=ok)


def test_example_specs_load():
    for name in EXAMPLES:
        assert load_spec(ROOT / "examples" / f"{name}.toml").accesses


# ----- each MMA atom's fragments are CuTe's own (mma_traits_sm80.hpp / sm89.hpp), by its full name -----
TF32_M_MAJOR = "tile_to_shape(composition(Swizzle<3,2,3>{}, Layout<Shape<_32,_8>,Stride<_1,_32>>{}), make_shape(_128{}, _32{}))"


def _mma_spec(atom: str, dtype: str = "tf32") -> dict:
    return {"shape": [128, 32], "dtype": dtype, "arch": "sm80", "dims": ["m", "k"], "memory": {"cute": TF32_M_MAJOR},
            "access": [{"name": "s2r", "kind": "load", "layout": {"cute_mma": {
                "atom": atom, "operand": "A", "warps": "(2,2,1)", "copy": "UniversalCopy<tfloat32_t>"}}}]}  # fmt: skip


def test_the_tf32_atom_gets_its_own_fragment_and_a_2_way_conflict():
    """CUTLASS's tf32 M-major A operand was 'conflict-free [proved]' at 256 wavefronts, read with the
    f16 m16n8k8 fragment of the same shape; CuTe's tf32 fragment makes it a 2-way conflict."""
    r = verify(spec=_mma_spec("SM80_16x8x8_F32TF32TF32F32_TN"))
    a = r.accesses[0]
    assert (r.verdict, a.wavefronts, a.state) == ("refuted", 512, "2-way conflict")
    assert a.conflict is not None and a.conflict.lanes == (1, 16)
    assert verify(spec=_mma_spec("SM80_16x8x8_F32F16F16F32_TN")).accesses[0].wavefronts == 256  # what it said


def test_atoms_of_one_shape_keep_their_own_fragments():
    from bankproof.models.notation.cute_mma_atoms import mma_atom

    assert mma_atom("SM80_16x8x16_S32S8S8S32_TN").a == "((4,8),(4,2)):((64,1),(16,8))"
    assert mma_atom("SM80_16x8x16_F16F16F16F16_TN").a == "((4,8),(2,2,2)):((32,1),(16,8,128))"
    assert mma_atom("SM80_16x8x8_F32TF32TF32F32_TN").b == "((4,8),2):((8,1),32)"
    assert mma_atom("SM80_8x8x4_F64F64F64F64_TN").mnk == (8, 8, 4)
    assert mma_atom("SM89_16x8x32_F32E4M3E5M2F32_TN") == mma_atom("SM80_16x8x32_S32U8S8S32_TN_SATURATE")
    with pytest.raises(InputError, match="mma atom names no atom any CUTLASS release defines"):
        mma_atom("SM80_16x8x8_F32XYZ_TN")  # a shape alone no longer picks a fragment


@pytest.mark.parametrize("atom", ["SM80_16x8x4_F32TF32TF32F32_TN", "SM80_8x8x4_F64F64F64F64_TN",
                                  "SM80_8x8x16_S32S8S8S32_TN", "SM80_16x8x32_S32S8S8S32_TN"])  # fmt: skip
def test_every_listed_atom_builds_a_linear_fragment(atom):
    from bankproof.models.notation.cute_mma_atoms import mma_atom

    at = mma_atom(atom)
    bits = {"F64": 64, "TF32": 32, "S8": 8}[next(k for k in ("F64", "TF32", "S8") if k in atom)]
    m, n, k = at.mnk
    acc = mma_fragment(atom, "A", [2 * m, 4 * k], bits, "(2,1,1)")
    assert acc.layout.is_surjective() and len(acc.layout.in_bases("lane")) == 5


def test_the_zfill_cp_async_atoms_are_the_same_shared_store():
    """CUTLASS's sm90 CpAsync builders and FA2/FA3 use the _ZFILL atoms (cute/arch/copy_sm80.hpp):
    the same cp.async with a source size of 0 when off, so the same shared-memory store."""
    for zfill, plain in (("SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"),
                         ("SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint64_t>", "SM80_CP_ASYNC_CACHEALWAYS<uint64_t>")):  # fmt: skip
        assert copy_atom(f"Copy_Atom<{zfill}, half_t>", 16).store == copy_atom(plain, 16).store
    spec = tomllib.loads((ROOT / "examples" / "cute_fa2_q_128x128.toml").read_text().replace(
        "SM80_CP_ASYNC_CACHEGLOBAL<", "SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<"))  # fmt: skip
    assert [a.wavefronts for a in verify(spec=spec).accesses] == [
        a.wavefronts for a in verify(spec=str(ROOT / "examples" / "cute_fa2_q_128x128.toml")).accesses
    ]


# ----- CuTe's auto-vectorizing copy ----------------------------------------------------------------
def _spec(memory: str, layout: str) -> str:
    return f'shape = [128, 128]\ndtype = "f16"\narch = "sm80"\n[memory]\ncute = "{memory}"\n' \
           f'[[access]]\nname = "s2g"\nkind = "load"\nlayout.cute_copy = {layout}\n'  # fmt: skip


ROWS8 = (
    "tile_to_shape(composition(Swizzle<3,3,3>{}, Layout<Shape<_8,_64>,Stride<_64,_1>>{}), Shape<_128,_128>{})"
)


def test_auto_vectorizing_copy_takes_the_widest_vector_the_layouts_give():
    from bankproof.verifier.api.spec_file import spec_from_text

    import bankproof as bp

    def run(atom: str, memory: str = ROWS8):
        lay = f'{{ atom = "{atom}", thr = "(16,8):(8,1)", val = "(1,8)" }}'
        return bp.verify(spec=spec_from_text(_spec(memory, lay))).access("s2g")

    a = run("Copy_Atom<AutoVectorizingCopyWithAssumedAlignment<128>, half_t>")
    assert (a.instr, a.instructions, a.wavefronts) == ("ld128", 64, 256)
    a = run("AutoVectorizingCopyWithAssumedAlignment<64>")  # 8 contiguous halfs, 64 bits at a time
    assert (a.instr, a.instructions) == ("ld64", 128)
    a = run("AutoVectorizingCopyWithAssumedAlignment<8>")  # gcd(8 x 16, 8) = 8 < 16 bits: element by element
    assert (a.instr, a.instructions) == ("ld16", 512)
    # a Swizzle<3,2,3> composition: CuTe's max_common_layout truncates to the swizzle's 2^2 elements
    sw232 = "tile_to_shape(composition(Swizzle<3,2,3>{}, Layout<Shape<_8,_64>,Stride<_64,_1>>{}), Shape<_128,_128>{})"
    a = run("AutoVectorizingCopyWithAssumedAlignment<128>", sw232)
    assert a.instr == "ld64"


def test_default_copy_is_refused_naming_what_to_write():
    with pytest.raises(
        InputError, match="CUTLASS releases define differently.*AutoVectorizingCopyWithAssumedAlignment"
    ):
        copy_atom("Copy_Atom<DefaultCopy, half_t>", 16)
    with pytest.raises(InputError, match="N = 8, 16, 32, 64 or 128"):
        copy_atom("AutoVectorizingCopyWithAssumedAlignment<256>", 16)


def test_fa2_epilogue_stores_32_bit_and_loads_128_bit_conflict_free():
    import bankproof as bp

    r = bp.verify(spec=str(Path(__file__).resolve().parents[1] / "examples" / "cute_fa2_o_epilogue.toml"))
    assert [(a.instr, a.wavefronts, a.ideal) for a in r.accesses] == [
        ("st32", 256, 256), ("ld128", 256, 256)]  # fmt: skip
    assert r.verdict == "proved"
