"""bankproof's descriptor derivation against CUTLASS's own, through the CuTe DSL on the CPU
(``lab/cute_desc_oracle.py`` wrote ``tests/data/cute_umma_desc_dsl.json``): for every tcgen05 layout
atom kind x element width x tile the DSL builds a descriptor for, bankproof derives the same layout
type and the same LBO/SBO (every field the tile uses), and that descriptor reads every element of
CuTe's tile where CuTe puts it. When the DSL is installed the table is re-derived first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bankproof.models.access import element_offsets
from bankproof.models.engines.canonical import derive, reads_tile
from bankproof.models.engines.descriptors import Descriptor, decode
from bankproof.models.engines.placement import DescriptorRead
from bankproof.models.errors import InputError
from bankproof.models.notation import parse_layout

TABLE = Path(__file__).parent / "data" / "cute_umma_desc_dsl.json"
BITS = {"f16": 16, "tf32": 32, "e4m3": 8}
SWIZZLE = {
    "S<0,4,3>": "none",
    "S<1,4,3>": "32B",
    "S<2,4,3>": "64B",
    "S<3,4,3>": "128B",
    "S<2,5,2>": "128B_atom32",
}


def table() -> dict:
    return json.loads(TABLE.read_text())


def test_dsl_descriptors_are_derived_and_read_the_tile():
    built = [c for c in table()["cases"] if c.get("descriptor")]
    assert len(built) == 108
    for c in built:
        bits = BITS[c["dtype"]]
        offsets = element_offsets(parse_layout(c["layout"]).layout) * (bits // 8)
        d = decode(int(c["descriptor"], 16), "sm100")
        major = "K" if c["kind"].startswith("K") else "MN"
        assert d.swizzle.name == SWIZZLE[c["swizzle"]], c
        for name, v in derive(offsets, d.swizzle.name, major, bits).items():
            assert v is None or v == getattr(d, name), (c, name)
        rel = Descriptor("sm100", d.start - c["address"], d.lbo, d.sbo, d.base_offset, d.swizzle)
        assert reads_tile(rel, offsets, major, bits, c["address"]), c


def test_refusals_and_mn_major_tf32():
    """The DSL refuses some MN-major tiles itself (recorded); bankproof refuses MN-major 32-bit
    operands with any swizzle but 128B with 32-byte atoms (CUTLASS's sm100 builder: "for mn-major
    tf32 operands, SW128_32B is the only available smem layout"), though the DSL's lower-level
    make_umma_smem_desc builds such descriptors."""
    cases = table()["cases"]
    assert sum("error" in c for c in cases) == 54
    mn32 = [c for c in cases if c.get("descriptor") and c["kind"].startswith("MN") and c["dtype"] == "tf32"
            and c["swizzle"] != "S<2,5,2>"]  # fmt: skip
    assert len(mn32) == 24
    for c in mn32:
        d = decode(int(c["descriptor"], 16), "sm100")
        with pytest.raises(InputError, match="SW128_32B is the only"):
            DescriptorRead(d, "MN", 32, 32)
    atom32 = [c for c in cases if c.get("descriptor") and c["swizzle"] == "S<2,5,2>"]
    assert (
        len(atom32) == 4
    )  # the DSL builds these; bankproof does not model their reads (no table, no measurement)
    with pytest.raises(InputError, match="not modelled"):
        DescriptorRead(decode(int(atom32[0]["descriptor"], 16), "sm100"), "MN", 32, 32)


def test_oracle_rederived_when_the_dsl_is_installed(tmp_path):
    pytest.importorskip("cutlass.cute")
    import subprocess
    import sys

    out = tmp_path / "t.json"
    subprocess.run([sys.executable, "-m", "lab.cute_desc_oracle", str(out)], check=True, timeout=1800,
                   cwd=Path(__file__).parent.parent)  # fmt: skip
    assert json.loads(out.read_text())["cases"] == table()["cases"]
