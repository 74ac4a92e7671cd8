"""CuTe atom names as CUTLASS defines them (issue 54): a name no CUTLASS release defines (a typo
of an MMA or copy atom, _NT for _TN, a wrong case, sm81, an N past GMMA's, an empty or unclosed
MMA_Atom<...>) is an input error naming the nearest real names (exit 2); a real atom without
fragments stays unread (exit 3); an atom the spec's arch does not have is refused (exit 2); the
SIMT UniversalFMA atom has its fragments (CuTe's MMA_Traits<UniversalFMA>: one thread, 1x1x1);
the table of names is CUTLASS's own (checked against the installed headers)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bankproof.models.errors import InputError, Untranslatable
from bankproof.models.notation.cute_mma_atoms import mma_atom
from bankproof.models.notation.cute_names import names, runs_on
from bankproof.verifier import api

C_LOAD = (
    "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>"
)


def spec(atom: str, arch: str = "sm90", shape=(16, 16), operand: str = "C", warps: str = "(1,1,1)") -> dict:
    return {"shape": list(shape), "dtype": "f32", "arch": arch, "dims": ["m", "n"],
            "memory": {"formula": f"{shape[1]}*m + n"},
            "access": [{"name": "c", "kind": "store", "instr": "auto",
                        "layout": {"cute_mma": {"atom": atom, "operand": operand, "warps": warps}}}]}  # fmt: skip


@pytest.mark.parametrize(
    "atom, nearest",
    [
        ("SM80_16x8x16_F32F16F16F32_NT", "SM80_16x8x16_F32F16F16F32_TN"),
        ("sm80_16x8x8_F32TF32TF32F32_TN", "SM80_16x8x8_F32TF32TF32F32_TN"),
        ("SM81_16x8x16_F32BF16BF16F32_TN", "SM80_16x8x16_F32BF16BF16F32_TN"),
        ("SM80_16x8x16_F32F16F16F32_TN_SATURATE", "SM80_16x8x16_F32F16F16F32_TN"),
        ("MMA_Atom<SM80_16x8x16_F32F16F16F32_TM>", "SM80_16x8x16_F32F16F16F32_TN"),
    ],
)
def test_a_typo_is_refused_with_the_nearest_names(atom, nearest):
    with pytest.raises(InputError, match=re.escape(nearest)) as e:
        api.verify(spec=spec(atom))
    assert not isinstance(e.value, Untranslatable) and "no atom any CUTLASS release defines" in str(e.value)


@pytest.mark.parametrize(
    "atom",
    ["", "MMA_Atom<", "MMA_Atom<>", "MMA_Atom<SM80_16x8x16_F32F16F16F32_TN", "SM90_64x512x16_F32F16F16_SS"],
)
def test_malformed_names_are_input_errors(atom):
    with pytest.raises(InputError) as e:
        mma_atom(atom)
    assert not isinstance(e.value, Untranslatable)


def test_a_real_atom_without_fragments_is_unread_not_refused():
    r = api.verify(spec=spec("SM70_8x8x4_F32F16F16F32_TN", "sm80"))
    assert r.verdict == "unknown" and r.exit_code == 3 and "real CuTe atom" in r.unread[0].reason


@pytest.mark.parametrize(
    "atom, arch",
    [
        ("SM100_MMA_F16BF16_SS", "sm90"),
        ("SM90_64x64x16_F32F16F16_SS", "sm100"),
        ("SM90_64x64x16_F32F16F16_SS", "sm80"),
        ("SM80_16x8x16_F32F16F16F32_TN", "sm75"),
    ],
)
def test_an_atom_the_arch_does_not_have_is_refused(atom, arch):
    if arch == "sm75":
        with pytest.raises(InputError, match="arch"):
            api.verify(spec=spec(atom, arch))
        return
    with pytest.raises(
        InputError, match=f"an SM{atom[2:5].rstrip('_')} mma atom, which {arch} does not have"
    ):
        api.verify(spec=spec(atom, arch))


def test_runs_on_by_family():
    assert runs_on("mma", 80, "sm120") and runs_on("copy", 90, "sm100") and not runs_on("mma", 100, "sm120")
    assert not runs_on("mma", 90, "sm100") and runs_on("mma", 90, "sm90")


def test_universal_fma_has_cutes_fragments():
    """MMA_Traits<UniversalFMA<D,A,B,C>>: Shape_MNK 1x1x1, ThrID Layout<_1>, A, B, C Layout<Shape<_1,_1>>;
    tiled over AtomLayoutMNK (16,16,1) (column-major), thread t holds C(t % 16, t / 16)."""
    at = mma_atom("UniversalFMA<float, float, float, float>")
    assert at.mnk == (1, 1, 1) and at.threads == 1 and at.c == "(1,1):(0,0)"
    r = api.verify(spec=spec("UniversalFMA<float,float,float,float>", warps="(16,16,1)"))
    (acc,) = r.accesses
    assert r.verdict in ("proved", "refuted") and acc.wavefronts is not None
    from bankproof.models.notation.cute_tiled_mma import mma_fragment

    lay = mma_fragment("UniversalFMA<float,float,float,float>", "C", [16, 16], 32, "(16,16,1)").layout
    assert [lay.apply(register=0, lane=t % 32, warp=t // 32) for t in (0, 1, 16, 17, 255)] == [
        {"dim0": 0, "dim1": 0}, {"dim0": 1, "dim1": 0}, {"dim0": 0, "dim1": 1}, {"dim0": 1, "dim1": 1},
        {"dim0": 15, "dim1": 15}]  # fmt: skip


def test_the_table_is_cutlass_own_where_its_headers_are_installed():
    """Every atom struct the installed CUTLASS headers (the cuda extra) define is in the table."""
    try:
        import cutlass_library
    except ImportError:
        pytest.skip("needs the cuda extra (CUTLASS headers)")
    arch = Path(cutlass_library.__file__).parent / "source" / "include" / "cute" / "arch"
    t = names()
    found = 0
    for f in arch.glob("*.hpp"):
        kind = "mma" if f.name.startswith("mma") else "copy" if f.name.startswith("copy") else None
        if kind is None:
            continue
        for name in re.findall(r"^\s*struct\s+((?:SM\d+|MMA|UMMA)_\w+)\s*$", f.read_text(), re.M):
            assert name in t[kind], (f.name, name)
            found += 1
    assert found > 500 and len(t["releases"]) >= 40
