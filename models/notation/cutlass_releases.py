"""What CuTe's auto-vectorizing copy atoms mean in each CUTLASS release.

``AutoVectorizingCopy`` and ``DefaultCopy`` are aliases, and ``cute::copy`` picks the width of an
auto-vectorizing copy differently across releases; read from CUTLASS's own ``cute/arch/copy.hpp``
and ``cute/algorithm/copy.hpp`` at every release tag:

============  ============================================  =====================================
release       aliases                                       width of an auto-vectorizing copy
============  ============================================  =====================================
3.0.0-3.2.x   ``AutoVectorizingCopy = DefaultCopy``         widest common vector, up to 128 bits
3.3.0-3.5.0   both ``AutoVectorizingCopyWithAssumed-        static layouts: widest common vector
              Alignment<8>``                                up to 128 bits, whatever N
3.5.1-4.7.0   ``AutoVectorizingCopy = ...<128>``,           widest common vector that N and the
              ``DefaultCopy = ...<8>``                      layouts' alignment divide
============  ============================================  =====================================

A spec's layouts are static (CuTe's ``Int<>`` shapes and strides), so 3.3.0-3.5.0 copy them up to
128 bits. :func:`resolve_copy` rewrites an atom into the form bankproof reads with today's
meaning (``AutoVectorizingCopyWithAssumedAlignment<N>`` as 3.5.1 and later define it) and says
which release's definition it took.

>>> resolve_copy("AutoVectorizingCopy", None)[0]
'AutoVectorizingCopyWithAssumedAlignment<128>'
>>> resolve_copy("Copy_Atom<DefaultCopy, half_t>", "3.4")[0]
'AutoVectorizingCopyWithAssumedAlignment<128>'
>>> resolve_copy("SM75_U32x4_LDSM_N", "3.4")
('SM75_U32x4_LDSM_N', '')
"""

from __future__ import annotations

import re

from bankproof.models.errors import InputError
from bankproof.models.notation.cute_expr import read
from bankproof.models.notation.cute_values import Tag

CURRENT = (4, 7, 0)  # the newest release whose definitions this table was read from
AUTO = "AutoVectorizingCopyWithAssumedAlignment"
ALIASES = ("AutoVectorizingCopy", "DefaultCopy")


def release(value: object) -> tuple[int, int, int] | None:
    """A spec's ``cutlass`` field (``"3.4"``, ``"3.5.1"``, ``"v4.7.0"``) as a version tuple.

    >>> release("v3.5.1"), release(None)
    ((3, 5, 1), None)
    """
    if value is None:
        return None
    m = re.fullmatch(r"v?(\d{1,3})\.(\d{1,3})(?:\.(\d{1,3}))?", value) if isinstance(value, str) else None
    if m is None:
        raise InputError("spec", "cutlass", 'must be a CUTLASS release such as "3.5.1" or "4.7"', value)
    out = (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))
    if out < (3, 0, 0):
        raise InputError("spec", "cutlass", "must be 3.0 or later (CuTe first shipped in CUTLASS 3.0)", value)
    return out


def resolve_copy(text: object, version: tuple[int, int, int] | str | None) -> tuple[object, str]:
    """``(atom, note)``: an auto-vectorizing copy atom rewritten to the form bankproof reads (its
    meaning in ``version``, the current release when None), and a note naming the definition
    taken; any other atom unchanged, with no note."""
    v = release(version) if isinstance(version, str) else version
    value = read(text) if isinstance(text, str) else None
    if isinstance(value, Tag) and value.name == "Copy_Atom" and value.args:
        value = value.args[0]
    if not isinstance(value, Tag) or (value.name not in ALIASES and value.name != AUTO):
        return text, ""
    if value.name == AUTO and _arg(value) not in (8, 16, 32, 64, 128):
        return text, ""  # copy_atom refuses it with its own message
    named = v is not None
    v = v or CURRENT
    given = value.name if value.name in ALIASES else f"{AUTO}<{_arg(value)}>"
    if v < (3, 3, 0):
        if value.name == AUTO:
            raise InputError("cute", "copy atom", f"{AUTO} does not exist before CUTLASS 3.3", text)
        atom = f"{AUTO}<128>"
        why = f"in CUTLASS {_text(v)} {given} copies the widest common vector up to 128 bits"
    elif v < (3, 5, 1):
        atom = f"{AUTO}<128>"
        why = (f"in CUTLASS {_text(v)} {given} copies static layouts (a spec's) with the widest common "
               "vector up to 128 bits, whatever its assumed alignment")  # fmt: skip
    elif value.name == AUTO:
        return f"{AUTO}<{_arg(value)}>", ""  # what bankproof reads it as: today's definition
    else:
        atom = f"{AUTO}<{128 if value.name == 'AutoVectorizingCopy' else 8}>"
        newest = _text(v) if named and v <= CURRENT else f"{_text(CURRENT)} (the newest read)"
        if named and v > CURRENT:
            newest += f", taken for {_text(v)}"
        why = f"in CUTLASS {newest} {given} is {atom}"
    if not named:
        why += '; name your release with cutlass = "X.Y.Z" in the spec if it is older'
    return atom, why


def _arg(value: Tag) -> object:
    return value.args[0] if len(value.args) == 1 else None


def _text(v: tuple[int, int, int]) -> str:
    return ".".join(map(str, v))
