"""Writers and readers of a tile agree on its bytes (bankproof agree): the engines' canonical pairing
for every mode x dtype x major-ness x operand x arch, the reports reproduced as refuted agreements,
the base-offset rule, the PTX worked example, and the command's exits."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from bankproof.models.access import element_offsets
from bankproof.models.engines.agreement import check, smallest_alignment
from bankproof.models.engines.canonical import pair, tma_tile
from bankproof.models.engines.descriptors import Descriptor, decode, encode, read_addresses
from bankproof.models.engines.tma import MODES
from bankproof.models.errors import InputError
from bankproof.models.notation.cute_values import Swizzle
from bankproof.models.notation.triton_shared import NVMMAShared
from bankproof.proofs.agreement import prove
from bankproof.verifier.api.agree import agree
from bankproof.verifier.cli.main import main

EXAMPLES = Path(__file__).parent.parent / "examples" / "engines"
ARCH_MODES = {"sm90": ["none", "32B", "64B", "128B"], "sm100": ["none", "32B", "64B", "128B", "128B_atom32"]}


@pytest.mark.slow
def test_every_mode_dtype_major_operand_agrees(capsys):
    """TMA writes a tile in boxes one span wide, descriptors with CUTLASS's canonical LBO/SBO read
    it (A: 64 rows of M, B: 128 rows of N), at bases on the period and 128/384 bytes off it (base
    offset 0): every element read where it was written, by enumeration and by Z3. Combinations the
    PTX rules forbid are refused with the rule."""
    agreed, refused = 0, []
    for arch, modes in ARCH_MODES.items():
        for name in modes:
            for bits in (8, 16, 32):
                for major in ("K", "MN"):
                    for rows in (64, 128):
                        try:
                            box, reads = pair(arch, name, bits, major, rows, 64 if bits < 32 else 32)
                        except InputError as e:
                            refused.append((arch, name, bits, major, str(e)))
                            continue
                        for base in (0, 128, 384):
                            assert all(check(box, r, base).agree for r in reads), (
                                arch,
                                name,
                                bits,
                                major,
                                base,
                            )
                            assert {prove(box, r, base=base).status for r in reads} == {"proved"}
                            agreed += 1
    with capsys.disabled():
        print(f"\n  agreement: {agreed} (arch, mode, dtype, major, operand, base) combinations agree; "
              f"{len(refused)} refused by PTX rules")  # fmt: skip
    assert agreed == 216 and len(refused) == 36
    assert all("PTX" in why or "CUTLASS" in why for *_, why in refused)
    sm90_mn = {(n, b) for a, n, b, m, _ in refused if a == "sm90" and m == "MN"}
    assert sm90_mn == {(n, b) for n in ARCH_MODES["sm90"] for b in (8, 32)}  # wgmma transposes 16-bit only


@pytest.mark.parametrize("span", [32, 64, 128])
@pytest.mark.parametrize("bits", [8, 16, 32])
@pytest.mark.parametrize("major", ["K", "MN"])
def test_tma_boxes_are_triton_nvmma(span, bits, major):
    """The boxes (span-wide panels, outermost) place every element where bankproof's reading of
    Triton's nvmma_shared (itself checked against Triton) does: the tile's contiguous dim last."""
    side = 1024 // bits
    box = tma_tile(f"{span}B", bits, major, side, side)
    off = element_offsets(NVMMAShared(span, False, bits).to_layout([side, side])) * bits // 8
    r, c = np.meshgrid(np.arange(side), np.arange(side), indexing="ij")
    assert (box.address(r, c, 0) == off).all()


def test_ptx_worked_example_mn_major_64b_bf16():
    """PTX: MN-major, 64B swizzle, bf16: Sw<2,4,3> o ((8,4,2),(8,2)):((1,8,256),(32,512)) elements,
    LBO 32 and SBO 64 encoded (16-byte units)."""
    d = Descriptor("sm90", 0, 32 * 16, 64 * 16, 0, MODES["64B"])
    value = encode(d)
    assert (value >> 16) & 0x3FFF == 32 and (value >> 32) & 0x3FFF == 64 and value >> 62 == 2
    assert decode(value, "sm90") == d
    got = read_addresses(d, "MN", 16, 64)
    mn, k = np.meshgrid(np.arange(64), np.arange(16), indexing="ij")
    elem = (mn % 8) + (mn // 8 % 4) * 8 + (mn // 32) * 256 + (k % 8) * 32 + (k // 8) * 512
    assert (got == Swizzle(2, 4, 3).apply(elem * 2)).all()


def _example(name: str, **kw):
    from bankproof.verifier.api.spec_file import tomllib

    data = tomllib.loads((EXAMPLES / f"{name}.toml").read_text())
    data.update(kw)
    return agree(data["writer"], data["reader"], dtype=data["dtype"], base=data.get("base", 0),
                 arch=data.get("arch", "sm90"))  # fmt: skip


def test_tilelang_2379_reproduced():
    """A 128B TMA tile at +128 read with the XOR from the buffer offset: every element wrong, the
    first is (0, 0) (written at 1168, read at 1152, where (0, 8) lies); 1024-byte alignment fixes it."""
    r = _example("tilelang_2379")
    f = r.first_mismatch
    assert (r.verdict, r.enumeration.mismatches, r.proof.status) == ("refuted", 4096, "refuted")
    assert (f.row, f.col, f.writer_address, f.reader_address, f.reads_element) == (0, 0, 1168, 1152, (0, 8))
    assert r.smallest_alignment == 1024 and _example("tilelang_2379", base=2048).verdict == "proved"


def test_emmy_200_reproduced():
    r = _example("emmy_200")
    f = r.first_mismatch
    assert (r.verdict, r.smallest_alignment, r.period) == ("refuted", 512, 1024)
    assert (f.row, f.col, f.writer_address, f.reader_address, f.reads_element) == (0, 0, 288, 256, (0, 16))
    assert r.agreeing_offsets == (0, 512)


def test_matmul_tutorial_14_no_alignment_helps():
    r = _example("matmul_tutorial_14")
    assert r.verdict == "refuted" and r.agreeing_offsets == () and r.smallest_alignment is None
    assert (r.first_mismatch.row, r.first_mismatch.col) == (1, 0)


def test_base_offset_rule():
    """Measured: a TMA tile off the period is read right with base offset 0 and wrong with the
    start's phase in the field; a tile written with the XOR from the buffer offset is read right
    only with the field set, and without it the alignment that would fix it is named."""
    assert _example("tma_wgmma_offset").verdict == "proved"
    wrong = _example("tma_wgmma_offset_field")
    assert wrong.verdict == "refuted" and wrong.enumeration.mismatches == 4096
    soft = _example("software_writer_offset")
    assert soft.verdict == "proved" and soft.agreeing_offsets == (384,)
    data_reader = {
        "descriptor": "fields",
        "swizzle": "128B",
        "lbo": 16,
        "sbo": 1024,
        "rows": 64,
        "k_steps": 4,
    }
    no_field = agree(
        {"layout": "(64,64):(64,1)", "swizzle": "Sw<3,4,3>"}, data_reader, dtype="f16", base=1408
    )
    assert no_field.verdict == "refuted" and no_field.smallest_alignment == 1024


def test_epilogue_tma_store():
    r = _example("epilogue_tma_store")
    assert r.verdict == "refuted" and r.smallest_alignment == 1024
    assert (r.first_mismatch.row, r.first_mismatch.col) == (0, 0)


def test_misaligned_tma_base_refused():
    with pytest.raises(InputError, match="128-byte aligned"):
        agree({"tma": "128B", "box": [8, 64]}, {"tma": "128B", "box": [8, 64]}, dtype="f16", base=64)


def test_alignment_engines_agree_on_random_pairs():
    """Enumeration and Z3 give the same verdict at random bases for random software XORs against
    TMA boxes (both refuted and proved cases occur)."""
    rng = np.random.default_rng(5)
    seen = set()
    for _ in range(40):
        name = ["32B", "64B", "128B"][int(rng.integers(0, 3))]
        box = tma_tile(name, 16, "K", 16, MODES[name].span // 2)
        b = int(rng.integers(0, 4))
        sw = Swizzle(b, 4, 3)
        from bankproof.models.engines.placement import LayoutPlacement

        soft = LayoutPlacement(np.arange(box.rows * box.cols).reshape(box.shape) * box.pitch // box.cols // 2, 16, sw,
                               ["relative", "absolute"][int(rng.integers(0, 2))])  # fmt: skip
        base = 128 * int(rng.integers(0, 16))
        e, z = check(box, soft, base).agree, prove(box, soft, base=base).status
        assert z == ("proved" if e else "refuted")
        seen.add(e)
    assert seen == {True, False}
    assert smallest_alignment(box, box) == 128


def test_cli(tmp_path):
    assert main(["agree", str(EXAMPLES / "tilelang_2379.toml")]) == 1
    assert main(["agree", str(EXAMPLES / "tma_wgmma_offset.toml")]) == 0
    assert main(["agree", str(EXAMPLES / "tilelang_2379.toml"), "--base", "0"]) == 0
    bad = {
        "base = 16\n": "base must be 128-byte aligned",
        'arch = "sm80"\n': "arch must be sm90 or sm100",
        "frob = 1\n": "frob is not a field",
    }
    for extra, message in bad.items():
        p = tmp_path / "s.toml"
        p.write_text(extra + (EXAMPLES / "tma_wgmma_offset.toml").read_text().replace("base = 1152\n", ""))
        import io

        err = io.StringIO()
        assert main(["agree", str(p)], io.StringIO(), err) == 2, extra
        assert message in err.getvalue() and "Traceback" not in err.getvalue()


def test_json(capsys):
    assert main(["agree", str(EXAMPLES / "emmy_200.toml"), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "refuted" and out["smallest_alignment"] == 512
    assert out["first_mismatch"] == {"row": 0, "col": 0, "writer_address": 288, "reader_address": 256,
                                     "reads_element": [0, 16]}  # fmt: skip


def test_sm100_reads_are_labelled_and_absolute_lbo_refused_where_lbo_is_read():
    """LBO mode 1 (an absolute LBO) is not modelled: refused where the canonical layout reads LBO
    (MN-major), answered where it never does (K-major swizzled)."""
    reader = {"descriptor": "fields", "swizzle": "128B", "lbo": 16, "sbo": 1024, "rows": 64, "k_steps": 4}
    r = agree({"tma": "128B", "box": [64, 64]}, reader, dtype="f16", base=0, arch="sm100")
    assert r.verdict == "proved" and any("not measured" in n for n in r.notes)
    r = agree({"tma": "128B", "box": [64, 64]}, {**reader, "lbo_mode": 1}, dtype="f16", arch="sm100")
    assert r.verdict == "proved"
    with pytest.raises(InputError, match="lbo_mode"):
        agree({"tma": "128B", "box": [64, 64]}, {**reader, "lbo_mode": 1, "major": "MN"}, dtype="f16",
              arch="sm100")  # fmt: skip


def test_descriptor_from_an_instruction_shape():
    reader = {"descriptor": "fields", "swizzle": "128B", "lbo": 16, "sbo": 1024, "instruction": "m64n128k16",
              "operand": "B", "k_steps": 4}  # fmt: skip
    r = agree({"tma": "128B", "box": [128, 64]}, reader, dtype="f16")
    assert r.verdict == "proved" and "128 rows" in r.reader and r.elements == 128 * 64
    for bad, why in (({"instruction": "m64n128k8"}, "k16"), ({"instruction": "x"}, "MMA shape"),
                     ({"operand": "C"}, "A or B"), ({"rows": 64}, "one or the other")):  # fmt: skip
        with pytest.raises(InputError, match=why):
            agree({"tma": "128B", "box": [128, 64]}, {**reader, **bad}, dtype="f16")


def test_cute_swizzled_pointer_is_absolute():
    """CuTe applies a swizzled smem_ptr's XOR to the pointer's absolute byte address: a GMMA/TMA
    atom printed that way agrees with a TMA box at any 128-byte-aligned base; read as an XOR from the
    buffer offset instead, it needs the 1024-byte period."""
    atom = "Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)"
    for base in (0, 128, 1152):
        assert (
            agree({"tma": "128B", "box": [8, 64]}, {"layout": atom}, dtype="f16", base=base).verdict
            == "proved"
        )
    rel = agree({"tma": "128B", "box": [8, 64]}, {"layout": atom, "xor": "relative"}, dtype="f16", base=128)
    assert rel.verdict == "refuted" and rel.smallest_alignment == 1024
    with pytest.raises(InputError, match="already in the CuTe layout"):
        agree({"tma": "128B", "box": [8, 64]}, {"layout": atom, "swizzle": "Sw<3,4,3>"}, dtype="f16")
