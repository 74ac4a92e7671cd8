"""CuTe's auto-vectorizing copies read as the CUTLASS release the spec names: held to CUTLASS's own
definitions at all 40 release tags from 3.0.0 (``tests/data/cutlass_copy_aliases.json``, written
by ``lab/cutlass_copy_aliases.py`` from each tag's ``cute/arch/copy.hpp`` and
``cute/algorithm/copy.hpp``), and the difference it makes to a spec's count."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bankproof.models.errors import InputError
from bankproof.models.notation.cutlass_releases import AUTO, CURRENT, release, resolve_copy
from bankproof.verifier import api

TABLE = Path(__file__).resolve().parent / "data" / "cutlass_copy_aliases.json"


def _regime(defs: dict) -> str:
    """How the release picks an auto-vectorizing copy's width, from its own code."""
    if "DefaultCopy" in defs["structs"]:
        return "widest up to 128"  # copy(): uint_bit_t<min(128, N * bits)>
    if any("is_static" in r for r in defs["rule"]):
        return "static layouts up to 128"
    assert any("gcd" in r for r in defs["rule"]), defs
    return "N and alignment"


def _alias(defs: dict, name: str) -> str:
    line = next(a for a in defs["aliases"] if a.startswith(f"using {name} ="))
    target = line.split("=", 1)[1].strip(" ;")
    return _alias(defs, target) if target in ("AutoVectorizingCopy", "DefaultCopy") else target


def test_every_release_tag_reads_as_its_own_definitions():
    releases = json.loads(TABLE.read_text())["releases"]
    assert (
        len(releases) == 40 and "3.0.0" in releases and f"{CURRENT[0]}.{CURRENT[1]}.{CURRENT[2]}" in releases
    )
    seen = set()
    for tag, defs in releases.items():
        regime = _regime(defs)
        seen.add(regime)
        for name in ("AutoVectorizingCopy", "DefaultCopy"):
            got, note = resolve_copy(name, tag)
            if regime == "N and alignment":
                assert got == _alias(defs, name), (tag, name)
                assert f"in CUTLASS {tag} {name} is {got}" in note
            else:  # static layouts (a spec's) vectorize up to 128 bits either way
                assert got == f"{AUTO}<128>", (tag, name)
                assert tag in note and "up to 128 bits" in note
        if regime == "widest up to 128":
            with pytest.raises(InputError, match="does not exist before CUTLASS 3.3"):
                resolve_copy(f"{AUTO}<8>", tag)
        elif regime == "static layouts up to 128":
            assert resolve_copy(f"{AUTO}<8>", tag)[0] == f"{AUTO}<128>"
        else:
            assert resolve_copy(f"{AUTO}<8>", tag) == (f"{AUTO}<8>", "")
    assert len(seen) == 3


def test_the_default_is_the_newest_release_read_and_says_so():
    atom, note = resolve_copy("Copy_Atom<cute::AutoVectorizingCopy, half_t>", None)
    assert atom == f"{AUTO}<128>"
    assert (
        note.startswith("in CUTLASS 4.7.0 (the newest read) AutoVectorizingCopy is")
        and 'cutlass = "X.Y.Z"' in note
    )
    later = resolve_copy("DefaultCopy", "9.1")[1]
    assert "4.7.0 (the newest read), taken for 9.1.0" in later


SPEC = {
    "shape": [128, 32], "dtype": "f16", "arch": "sm80", "dims": ["m", "k"],
    "memory": {"cute": "tile_to_shape(composition(Swizzle<3,3,3>{}, Layout<Shape<_8,_32>,Stride<_32,_1>>{}), "
                       "make_shape(Int<128>{}, Int<32>{}))"},
    "access": [{"name": "g2s", "kind": "store",
                "layout": {"cute_copy": {"atom": "Copy_Atom<DefaultCopy, half_t>", "thr": "(32,4):(4,1)",
                                         "val": "(1,8)"}}}],
}  # fmt: skip


@pytest.mark.parametrize(
    "cutlass, instr, wavefronts",
    [(None, "st16", 512), ("4.7", "st16", 512), ("3.5.1", "st16", 512),
     ("3.5.0", "st128", 64), ("3.2.1", "st128", 64)],
)  # fmt: skip
def test_defaultcopy_stores_as_its_release_defines_it(cutlass, instr, wavefronts):
    """``DefaultCopy`` is element-wise since 3.5.1 (``<8>``): 128 16-bit stores, 4-way conflicting
    on this Swizzle<3,3,3> tile; before, a static tile is copied 128 bits at a time: conflict-free."""
    spec = {**SPEC, "cutlass": cutlass} if cutlass else SPEC
    r = api.verify(spec=spec)
    (a,) = r.accesses
    assert (a.instr, a.wavefronts) == (instr, wavefronts)
    assert any("DefaultCopy" in w for w in r.memory.warnings)


@pytest.mark.parametrize("value", ["2.11", "three", "3", 3.4, "3.4.5.6", "v"])
def test_a_release_that_is_not_one_is_refused(value):
    with pytest.raises(InputError, match=re.escape("spec: cutlass must")):
        api.verify(spec={**SPEC, "cutlass": value})
    if isinstance(value, str) and re.fullmatch(r"\d+\.\d+", value):
        with pytest.raises(InputError, match="CuTe first shipped in CUTLASS 3.0"):
            release(value)
