"""The scan's instruction policy against Triton 3.9.0's own PTX: per Python source location, the
shared-memory instructions the scan counted each access with are the ones Triton emitted."""

from __future__ import annotations

import importlib.util

import pytest
from bankproof.models.access import build_access
from bankproof.models.notation import parse_layout
from bankproof.verifier.cli.main import main
from bankproof.verifier.triton import lowering

pytestmark = pytest.mark.compile

PTX = """
\t.loc\t1 7 3
\tldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];
\t.loc\t1 9 3
\t@%p1 cp.async.cg.shared.global [ %r1 + 0 ], [ %rd1 + 0 ], 0x10, %r2;
\t.loc\t1 30 1, function_name $L__info_string0, inlined_at 1 7 3
\tst.shared.v4.b32 [%r8], {%r1, %r2, %r3, %r4};
\t.file\t1 "/k/kernel.py"
"""


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="needs the triton extra")
def test_corpus_instructions_match_tritons_ptx(corpus_entries, capsys):
    compiled = [e.to_dict() for e in corpus_entries if e.compiled]
    assert len(compiled) >= 90
    assert {(e["config"], e["arch"]): e["lowering"] for e in compiled if e["lowering"]} == {}
    kinds = sorted({k for e in compiled for k in e["ptx_counts"]})
    assert {"ldsm.x4", "ldsm.x4.trans", "cp16", "cp8", "cp4"} <= set(kinds)
    modes = {(size, m) for e in compiled for size, ms in e["cp_async_modes"].items() for m in ms}
    assert modes == {("16", "cg"), ("8", "ca"), ("4", "ca")}  # the scan's `hardware` provenance rests on this
    with capsys.disabled():
        print(
            f"\nlowering: {len(compiled)} kernels, scan instructions = Triton's PTX at every access location"
        )


TF32_A = (
    "#ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, "
    "warpsPerCTA = [2, 2], instrShape = [16, 8]}>, kWidth = 1}>"
)
SWIZZLED = "#ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = [1, 0]}>"


@pytest.mark.parametrize(("dtype", "shape", "kwidth"), [("f32", (64, 32), 1), ("i8", (64, 64), 4)])
def test_ldmatrix_moves_8_and_32_bit_operands(dtype, shape, kwidth):
    """Triton loads tf32 and 8-bit A operands with ldmatrix.x4: each lane gets 4 bytes of a
    16-byte row per matrix, i.e. 1 or 4 elements; the same data as ld32 in 4x fewer instructions."""
    bits = 32 if dtype == "f32" else 8
    dist = parse_layout(TF32_A.replace("kWidth = 1", f"kWidth = {kwidth}"), list(shape)).layout
    vec = 16 * 8 // bits  # 16-byte swizzle units, so ldmatrix rows stay whole
    mem = parse_layout(SWIZZLED.replace("vec = 4", f"vec = {vec}"), list(shape), dtype=dtype).layout
    ldsm = build_access(dist, mem, bits, "load", "ldsm.x4")
    ld32 = build_access(dist, mem, bits, "load", "ld32")
    assert len(ld32.addresses) == 4 * len(ldsm.addresses)
    with pytest.raises(Exception, match="16-bit elements with .trans"):
        build_access(dist, mem, bits, "load", "ldsm.x4.trans")


def test_ldmatrix_32_bit_engines_agree(tmp_path, capsys):
    spec = tmp_path / "tf32.toml"
    spec.write_text(
        'shape = [64, 32]\ndtype = "f32"\n[memory]\n'
        f'triton = "{SWIZZLED}"\n[[access]]\nname = "a"\nkind = "load"\ninstr = "ldsm.x4"\n'
        f"layout.triton = '{TF32_A}'\n"
    )
    code = main(["verify", str(spec)])
    out = capsys.readouterr().out
    assert code in (0, 1), out  # never 4: enumeration, Lemma 9.4 and Z3 agree
    assert "x ldmatrix.sync.aligned.m8n8.x4.shared.b16" in out


def test_the_corpus_counts_come_from_the_one_parse():
    """``kernel_counts`` reads the instructions the compile's one PTX parse classified: names, sizes and
    cp.async cache modes (the corpus entries' ``ptx_counts`` and ``cp_async_modes``)."""
    from bankproof.verifier.ptx.parse import parse_kernel

    body = PTX.replace("\t.file\t1", "\tret;\n}\n\t.file\t1")
    ptx = ".visible .entry k(\n.param .u64 k_param_0\n)\n.maxntid 64, 1, 1\n{\n" + body
    assert lowering.kernel_counts(parse_kernel(ptx)) == (
        {"ldsm.x4": 1, "cp16": 1, "st128": 1},
        {"16": ("cg",)},
    )
