"""Linear algebra over F2 on bit-vectors stored as Python ints.

A vector of F2^n is an int whose bit i is coordinate i; a set of vectors is a list of ints.
XOR is addition. A matrix is given by its columns: ``cols[i]`` is the image of input bit i.

>>> rank([0b011, 0b101, 0b110])
2
>>> in_span(0b110, [0b011, 0b101])
True
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def echelon(vectors: Iterable[int]) -> list[int]:
    """Reduced basis of span(vectors): distinct leading (highest) bits, each leading bit
    absent from every other vector, sorted by leading bit descending.

    >>> [bin(v) for v in echelon([0b110, 0b011, 0b101])]
    ['0b101', '0b11']
    """
    basis: list[int] = []
    for v in vectors:
        basis = extend(basis, v)
    return basis


def reduce(v: int, basis: Sequence[int]) -> int:
    """Reduce v modulo span(basis) to its unique smallest representative.

    ``basis`` must come from :func:`echelon`.

    >>> reduce(0b111, echelon([0b100]))
    3
    """
    for w in basis:
        lead = w.bit_length() - 1
        if (v >> lead) & 1:
            v ^= w
    return v


def rank(vectors: Iterable[int]) -> int:
    """Dimension of span(vectors).

    >>> rank([1, 2, 3])
    2
    """
    basis: list[int] = []  # leading bits distinct, descending
    for v in vectors:
        for w in basis:
            v = min(v, v ^ w)
        if v:
            basis.append(v)
            basis.sort(reverse=True)
    return len(basis)


def in_span(v: int, vectors: Iterable[int]) -> bool:
    """Whether v lies in span(vectors).

    >>> in_span(3, [1, 2])
    True
    """
    return reduce(v, echelon(vectors)) == 0


def span(vectors: Iterable[int]) -> list[int]:
    """Every element of span(vectors), sorted (exponential: for small spaces and tests).

    >>> span([1, 2])
    [0, 1, 2, 3]
    """
    out = {0}
    for v in echelon(vectors):
        out |= {x ^ v for x in out}
    return sorted(out)


def intersection(u: Iterable[int], v: Iterable[int]) -> list[int]:
    """A basis (echelon form) of span(u) ∩ span(v) (Zassenhaus).

    >>> intersection([0b011, 0b100], [0b111])
    [7]
    """
    u = echelon(u)
    v = echelon(v)
    if not u or not v:
        return []
    n = max(x.bit_length() for x in u + v)
    # Rows (a | a) for a in U and (b | 0) for b in V; rows with zero left half give U ∩ V.
    rows = [(a << n) | a for a in u] + [b << n for b in v]
    basis = echelon(rows)
    mask = (1 << n) - 1
    return echelon(r & mask for r in basis if r >> n == 0)


def complement(vectors: Iterable[int], n: int) -> list[int]:
    """Unit vectors e_i completing span(vectors) to F2^n, lowest i first.

    >>> complement([0b011], 3)
    [1, 4]
    """
    basis = echelon(vectors)
    out = []
    for i in range(n):
        e = 1 << i
        if reduce(e, basis):
            out.append(e)
            basis = extend(basis, e)
    return out


def extend(basis: list[int], v: int) -> list[int]:
    """:func:`echelon` of ``basis + [v]`` for an echelon ``basis`` (one vector added).

    >>> extend(echelon([0b100]), 0b110)
    [4, 2]
    """
    for w in basis:
        v = min(v, v ^ w)  # clears w's leading bit from v when set (leading bits descend)
    if not v:
        return basis
    lead = 1 << (v.bit_length() - 1)
    out = [w ^ v if w & lead else w for w in basis] + [v]
    out.sort(reverse=True)
    return out


def apply(cols: Sequence[int], x: int) -> int:
    """The matrix with columns ``cols`` applied to x: XOR of cols[i] over set bits i of x.

    >>> apply([0b01, 0b11], 0b10)
    3
    """
    if not x & (x - 1):  # 0 or one bit: a column (the common case of unit vectors)
        return cols[int(x).bit_length() - 1] if x else 0
    out = 0
    i = 0
    while x:
        if x & 1:
            out ^= cols[i]
        x >>= 1
        i += 1
    return out


def nullspace(cols: Sequence[int]) -> list[int]:
    """A basis (echelon form) of {x : apply(cols, x) = 0}.

    >>> nullspace([1, 1, 2])
    [3]
    """
    m = len(cols)
    if m == 0:
        return []
    # Augment each column with its own index bit and eliminate on the column part.
    rows = [(c << m) | (1 << i) for i, c in enumerate(cols)]
    basis = echelon(rows)
    low = (1 << m) - 1
    return echelon(r & low for r in basis if r >> m == 0)


def solve(cols: Sequence[int], y: int) -> int | None:
    """The smallest x (as an integer) with apply(cols, x) == y, or None when y ∉ image.

    >>> solve([1, 1, 2], 3)
    5
    """
    m = len(cols)
    rows = [(c << m) | (1 << i) for i, c in enumerate(cols)]
    basis = echelon(rows)
    low = (1 << m) - 1
    target = y << m
    r = reduce(target, basis)
    if r >> m:
        return None
    x = r & low
    return reduce(x, nullspace(cols))


def preimages(cols: Sequence[int], n: int) -> list[int]:
    """For each unit e_i (i < n): some x with apply(cols, x) == e_i, or 0 when e_i is not in the
    image (one elimination for all n; for invertible ``cols``, the inverse's columns).

    >>> preimages([0b01, 0b11], 2)
    [1, 3]
    """
    m = len(cols)
    pivots: dict[int, int] = {}  # pivot bit of the column part -> row (col << m | combination)
    for i, c in enumerate(cols):
        row = (c << m) | (1 << i)
        for bit, other in pivots.items():
            if (row >> (m + bit)) & 1:
                row ^= other
        if row >> m == 0:
            continue
        bit = (row >> m).bit_length() - 1
        for k, other in list(pivots.items()):
            if (other >> (m + bit)) & 1:
                pivots[k] = other ^ row
        pivots[bit] = row
    low = (1 << m) - 1
    out = []
    for i in range(n):
        target, x = 1 << i, 0
        for bit, row in pivots.items():
            if (target >> bit) & 1:
                target ^= row >> m
                x ^= row & low
        out.append(x if target == 0 else 0)
    return out


def is_injective(cols: Sequence[int]) -> bool:
    """Whether the columns are linearly independent (no nonzero x maps to 0)."""
    return rank(cols) == len(cols)


def inverse(cols: Sequence[int], n: int) -> list[int] | None:
    """The inverse's columns of a square matrix (``n`` columns of ``n`` bits): for each unit e_i
    the x with apply(cols, x) == e_i; None when the matrix is singular. One Gauss-Jordan pass
    over rows packed as ``image << n | combination`` (what :func:`preimages` gives, faster for
    the square case).

    >>> inverse([0b01, 0b11], 2), inverse([0b01, 0b01], 2)
    ([1, 3], None)
    """
    if len(cols) != n:
        return None
    rows = [(c << n) | (1 << i) for i, c in enumerate(cols)]
    once = twice = 0  # bits some column has; bits two or more have
    for c in cols:
        twice |= once & c
        once |= c
    # A bit one column alone has pivots on that column with nothing to eliminate, provided it
    # comes first (swizzles and permutations are mostly such bits); the rest is Gauss-Jordan.
    order = [b for b in range(n) if not twice >> b & 1] + [b for b in range(n) if twice >> b & 1]
    for k, b in enumerate(order):  # row k takes the pivot of bit b
        bit = 1 << (n + b)
        for p in range(k, n):
            if rows[p] & bit:
                break
        else:
            return None
        pivot = rows[p]
        rows[p] = rows[k]
        if twice >> b & 1:
            rows = [r ^ pivot if r & bit else r for r in rows]  # clears the pivot's own row too
        rows[k] = pivot
    low, out = (1 << n) - 1, [0] * n
    for k, b in enumerate(order):  # row k's image is e_b: its combination is e_b's preimage
        out[b] = rows[k] & low
    return out
