"""Triton TTGIR layout attributes: parsed, printed back as Triton prints them, and turned into
linear layouts exactly as Triton 3.9 does (``to_linear_layout``).

>>> a = parse_triton("#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 16, order = [1, 0]}>")
>>> a.to_layout([16, 32]).as_dict()["offset"][5:]
[[1, 2], [2, 4], [4, 8], [8, 16]]
>>> a.text()
'#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 16, order = [1, 0]}>'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bankproof.models.errors import InputError, log2
from bankproof.models.layout import LinearLayout
from bankproof.models.notation import triton_ll as tl
from bankproof.models.notation.mlir import Attribute, parse_attribute
from bankproof.models.notation.triton_distributed import Blocked, DotOperand, Linear, NvidiaMma, Slice
from bankproof.models.notation.triton_fields import Fields, TritonLayout, bases_tuple, fmt_value
from bankproof.models.notation.triton_shared import NVMMAShared, PaddedShared, SharedLinear, SwizzledShared

__all__ = [
    "Blocked", "DotOperand", "Linear", "NVMMAShared", "NvidiaMma", "PaddedShared", "SharedLinear", "Slice",
    "SwizzledShared", "TritonLayout",
    "from_attribute", "linear_text", "parse_triton", "register", "shared_alignment", "shared_linear_text",
    "swizzled_shared_for",
]  # fmt: skip


# ----- dispatch --------------------------------------------------------------------------------
_FIELDS = {
    "blocked": ["sizePerThread", "threadsPerWarp", "warpsPerCTA", "order", "CGALayout"],
    "linear": ["register", "lane", "warp", "block"],
    "nvidia_mma": ["versionMajor", "versionMinor", "warpsPerCTA", "instrShape", "CGALayout"],
    "dot_op": ["opIdx", "parent", "kWidth"],
    "slice": ["dim", "parent"],
    "swizzled_shared": ["vec", "perPhase", "maxPhase", "order", "CGALayout"],
    "nvmma_shared": ["swizzlingByteWidth", "transposed", "elementBitWidth", "fp4Padded", "rank", "CGALayout"],
    "shared_linear": ["offset", "block"],
    "padded_shared": ["order", "shape", "offset", "block"],
}
_PARSERS: dict = {}  # kinds other modules add (triton_mfma), with their own parse functions


def register(kind: str, fields: Sequence[str], parse) -> None:
    """Add an attribute kind (``#ttg.<kind>``) read by ``parse(fields) -> TritonLayout``."""
    _FIELDS[kind] = list(fields)
    _PARSERS[kind] = parse


def from_attribute(attr: Attribute) -> TritonLayout:
    """A parsed :class:`Attribute` -> the typed layout, with field checks."""
    dialect, _, kind = attr.kind.partition(".")
    if dialect != "ttg" or kind not in _FIELDS:
        raise InputError(
            "triton", "attribute", f"kind must be one of #ttg.{', #ttg.'.join(_FIELDS)}", "#" + attr.kind
        )
    f = Fields(kind, attr.params, _FIELDS[kind])
    if attr.trailing and kind != "shared_linear":
        raise InputError(kind, ", ".join(attr.trailing), "is not a field of " + kind)
    if attr.intervals and kind != "padded_shared":
        raise InputError(kind, "intervals", "only padded_shared takes [interval:+pad] lists")
    if kind in ("dot_op", "slice"):
        p = f.get("parent")
        if not isinstance(p, Attribute):
            raise InputError(kind, "parent", "must be a layout attribute", fmt_value(p))
        parent = from_attribute(p)
        return DotOperand.parse(f, parent) if kind == "dot_op" else Slice.parse(f, parent)
    if kind == "shared_linear":
        return SharedLinear.parse(f, attr.trailing)
    if kind == "padded_shared":
        return PaddedShared.parse(f, attr.intervals)
    if kind in _PARSERS:
        return _PARSERS[kind](f)
    return {
        "blocked": Blocked.parse,
        "linear": Linear.parse,
        "nvidia_mma": NvidiaMma.parse,
        "swizzled_shared": SwizzledShared.parse,
        "nvmma_shared": NVMMAShared.parse,
    }[kind](f)


def parse_triton(text: str, aliases: Mapping[str, str] | None = None) -> TritonLayout:
    """Parse Triton attribute text (``#alias = ...`` lines allowed before it)."""
    return from_attribute(parse_attribute(text, aliases))


# ----- printing any linear layout in Triton notation --------------------------------------------
def linear_text(layout: LinearLayout) -> str:
    """A distributed :class:`LinearLayout` as ``#ttg.linear<...>``."""
    b = layout.as_dict()
    return Linear(*(bases_tuple(b.get(d, [])) for d in ("register", "lane", "warp", "block"))).text()


def shared_alignment(attr: object) -> int:
    """The byte alignment Triton 3.9.0 requires of a shared buffer with this attribute
    (``getAlignment``): 16 for ``swizzled_shared``; ``128 * maxPhase`` for ``nvmma_shared``
    (1024 for a 128-byte swizzle: TMA and wgmma rely on it); a ``shared_linear``'s own.

    >>> shared_alignment(parse_triton("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, "
    ...                               "elementBitWidth = 16}>"))
    1024
    """
    if isinstance(attr, NVMMAShared):
        return 128 * (attr.swizzle // 16 if attr.swizzle else 1)
    if isinstance(attr, SharedLinear):
        return attr.alignment
    return 16


def shared_linear_text(layout: LinearLayout, alignment: int = 16) -> str:
    """A memory :class:`LinearLayout` as ``#ttg.shared_linear<...>``."""
    b = layout.as_dict()
    return SharedLinear(bases_tuple(b.get("offset", [])), bases_tuple(b.get("block", [])), alignment).text()


def _row_offsets(want, order, shape) -> list[int] | None:
    """A quick necessary condition (2-D), the same for every (vec, perPhase, maxPhase): row 0 is
    unswizzled (the column bits come first, unmoved) and row ``2^j``'s basis moves one row; then
    the column it starts at, per row bit, which must be ``vec * ((2^j // perPhase) % maxPhase)``.
    ``None`` when the condition fails; ``[]`` (nothing to check) for other ranks.

    >>> _row_offsets(((0, 1), (0, 2), (1, 2)), (1, 0), [2, 4])
    [2]
    """
    if len(shape) != 2:
        return []
    c, r = order[0], order[1]
    cbits, rbits = log2(shape[c]), log2(shape[r])
    if len(want) < cbits + rbits or not all(want[i][c] == 1 << i and want[i][r] == 0 for i in range(cbits)):
        return None
    if any(want[cbits + j][r] != 1 << j for j in range(rbits)):
        return None
    return [want[cbits + j][c] for j in range(rbits)]


def _orders(bases, rank: int):
    """The dim orders worth trying for a ``swizzled_shared`` reading of these offset bases: the
    order the dims first appear in (the contiguous dim's bits come first, each row dim's first bit
    brings it in; a dim of one element never appears, and goes last in each arrangement of them);
    every order when the rank is small (at most 4), so nothing is missed where trying is cheap.

    >>> list(_orders(((0, 1), (0, 2), (1, 0)), 2))[0]
    (1, 0)
    """
    from itertools import permutations

    seen: list[int] = []
    for b in bases:
        seen += [d for d in range(rank) if b[d] and d not in seen]
    rest = [d for d in range(rank) if d not in seen]
    tried = set()
    for tail in (tuple(sorted(rest, reverse=True)), tuple(rest)):
        order = tuple(seen) + tail
        if order not in tried:
            tried.add(order)
            yield order
    if rank <= 4:
        yield from (o for o in permutations(range(rank)) if o not in tried)


def swizzled_shared_for(layout: LinearLayout) -> SwizzledShared | None:
    """The ``#ttg.swizzled_shared`` attribute with exactly this memory layout (one CTA), or None.
    Searches orders and power-of-two (vec, perPhase, maxPhase), smallest first.

    >>> L = parse_triton("#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 16, order = [1, 0]}>")
    >>> swizzled_shared_for(L.to_layout([16, 32]).with_in_bases("block", [])).text()
    '#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 16, order = [1, 0]}>'
    """
    shape = [s for _, s in layout.out_dims]
    rank = len(shape)
    if [n for n, _ in layout.out_dims] != tl.dims(rank) or layout.in_bases("block"):
        return None
    want = layout.in_bases("offset")
    for order in _orders(want, rank):
        starts = _row_offsets(want, order, shape)
        if starts is None:
            continue
        cols = shape[order[0]]
        rows = shape[order[1]] if rank > 1 else 1
        for max_phase in (1 << i for i in range(log2(cols) + 1)):
            for vec in (1 << i for i in range(log2(cols) + 1)):
                if max_phase > 1 and vec * max_phase > cols:
                    continue
                for per_phase in (1 << i for i in range(log2(max(rows, 1)) + 1)):
                    if any(x != vec * (((1 << j) // per_phase) % max_phase) for j, x in enumerate(starts)):
                        continue
                    cand = SwizzledShared(vec, per_phase, max_phase, tuple(order))
                    if cand.to_layout(shape).in_bases("offset") == want:
                        return cand
                    if max_phase == 1:
                        break
                if max_phase == 1:
                    break
    return None
