"""The names of CuTe's atoms as CUTLASS defines them: every MMA and copy atom ``struct`` (and
alias) of ``include/cute/arch`` at every release tag from 3.0.0, with the first arch each needs
(``cute_atoms.json``, written by ``lab/cute_atom_names.py`` from CUTLASS's own headers). A name
none of them defines is a typo, refused with the nearest real names; a real name bankproof has no
fragments for stays :class:`~bankproof.models.errors.Untranslatable` (unknown); an atom newer than
the spec's arch is refused.

>>> try:
...     unknown_atom("mma", "SM80_16x8x16_F32F16F16F32_NT")
... except InputError as e:
...     print(e.problem.split("; ")[1].split(",")[0])
the nearest: SM80_16x8x16_F32F16F16F32_TN
>>> atom_arch("MMA_Atom<SM100_MMA_F16BF16_SS<half_t, half_t, float, 128, 256>>")
100
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from pathlib import Path

from bankproof.models.errors import InputError, Untranslatable

TABLE = Path(__file__).with_name("cute_atoms.json")
_WORD = re.compile(r"[A-Za-z_]\w*")


@functools.lru_cache(maxsize=1)
def names() -> dict:
    """``{"releases": [...], "mma": {name: arch}, "copy": {name: arch}}``."""
    return json.loads(TABLE.read_text())


def atom_arch(text: str) -> int:
    """The newest arch any real atom named in ``text`` needs (0: none, or every arch)."""
    t = names()
    return max((t[k].get(w, 0) for w in _WORD.findall(text) for k in ("mma", "copy")), default=0)


def runs_on(kind: str, needs: int, arch: str) -> bool:
    """Whether an atom of ``kind`` that needs ``needs`` (SM``needs``) runs on ``arch``: mma.sync
    and the plain copies on every later arch; SM90's GMMA (wgmma) on sm90 alone; SM100's UMMA
    (tcgen05) and its tensor-memory copies on the sm100 family, not sm120.

    >>> runs_on("mma", 80, "sm90"), runs_on("mma", 90, "sm100"), runs_on("mma", 100, "sm90")
    (True, False, False)
    """
    m = re.fullmatch(r"sm(\d+)a?", arch)
    if m is None:
        return needs == 0
    have = int(m.group(1))
    if kind == "mma" and needs == 90:
        return have == 90
    if needs == 100:
        return 100 <= have < 120
    return have >= needs


def check_arch(text: str, arch: str, field: str) -> None:
    """Refuse atoms named in ``text`` that ``arch`` does not have (an input error, exit 2)."""
    t = names()
    for word in dict.fromkeys(_WORD.findall(text)):
        for kind in ("mma", "copy"):
            needs = t[kind].get(word)
            if needs is not None and not runs_on(kind, needs, arch):
                why = f"names {word}, an SM{needs} {kind} atom, which {arch} does not have"
                raise InputError("spec", field, why, text)


def unknown_atom(kind: str, name: str, text: str | None = None) -> None:
    """Raise for an atom ``name`` (bare, no wrappers) that bankproof has no fragments for: an
    :class:`InputError` naming the nearest real names where no release defines it, else
    :class:`Untranslatable`. ``text`` is what the user wrote (quoted in the error)."""
    t = names()
    field = f"{kind} atom"
    shown = text if text is not None else name
    if not name or not _WORD.fullmatch(name):
        raise InputError("cute", field, "must name a CuTe atom (e.g. SM80_16x8x16_F32F16F16F32_TN)", shown)
    if name in t[kind]:
        raise Untranslatable(
            "cute", field, "is a real CuTe atom, but not one bankproof has CuTe's fragments for", shown
        )
    near = difflib.get_close_matches(name, list(t[kind]), n=3, cutoff=0.6)
    span = f"{t['releases'][0]} to {t['releases'][-1]}"
    hint = f"; the nearest: {', '.join(near)}" if near else ""
    raise InputError("cute", field, f"names no atom any CUTLASS release defines ({span}){hint}", shown)


__all__ = ["names", "atom_arch", "unknown_atom", "check_arch", "runs_on"]
