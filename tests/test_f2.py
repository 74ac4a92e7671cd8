"""F2 algebra against brute-force enumeration, for dimension <= 10."""

from __future__ import annotations

from itertools import product

from bankproof.models import f2
from hypothesis import given
from hypothesis import strategies as st

N = 10
vecs = st.lists(st.integers(0, (1 << N) - 1), max_size=8)


def brute_span(vs: list[int]) -> set[int]:
    out = set()
    for coeffs in product([0, 1], repeat=len(vs)):
        x = 0
        for c, v in zip(coeffs, vs):
            if c:
                x ^= v
        out.add(x)
    return out


@given(vecs)
def test_rank_and_span(vs):
    s = brute_span(vs)
    assert len(s) == 1 << f2.rank(vs)
    assert set(f2.span(vs)) == s


@given(vecs, st.integers(0, (1 << N) - 1))
def test_in_span(vs, v):
    assert f2.in_span(v, vs) == (v in brute_span(vs))


@given(vecs)
def test_echelon_is_reduced(vs):
    e = f2.echelon(vs)
    leads = [v.bit_length() - 1 for v in e]
    assert leads == sorted(leads, reverse=True) and len(set(leads)) == len(leads)
    for v in e:
        for w in e:
            if v != w:
                assert not (w >> (v.bit_length() - 1)) & 1


@given(vecs, vecs)
def test_intersection(u, v):
    got = brute_span(f2.intersection(u, v))
    assert got == brute_span(u) & brute_span(v)


@given(vecs)
def test_complement(vs):
    c = f2.complement(vs, N)
    assert f2.rank(vs + c) == N
    assert f2.rank(vs) + len(c) == N
    assert all(x & (x - 1) == 0 for x in c)


@given(vecs)
def test_nullspace(cols):
    kernel = {x for x in range(1 << len(cols)) if f2.apply(cols, x) == 0}
    assert brute_span(f2.nullspace(cols)) == kernel


@given(vecs, st.integers(0, (1 << N) - 1))
def test_solve_smallest(cols, y):
    sols = [x for x in range(1 << len(cols)) if f2.apply(cols, x) == y]
    assert f2.solve(cols, y) == (min(sols) if sols else None)


def test_exact_values():
    assert f2.rank([0b011, 0b101, 0b110]) == 2
    assert f2.intersection([0b011, 0b100], [0b111]) == [0b111]
    assert f2.complement([0b011], 3) == [0b001, 0b100]
    assert f2.nullspace([1, 1, 2]) == [0b011]
    assert f2.solve([1, 1, 2], 3) == 0b101
    assert f2.solve([1, 2], 4) is None


def test_inverse_equals_preimages_on_random_square_matrices():
    import random

    from bankproof.models import f2

    rng = random.Random(5)
    singular = 0
    for _ in range(3000):
        n = rng.randint(1, 16)
        cols = [rng.randrange(0, 1 << n) for _ in range(n)]
        inv = f2.inverse(cols, n)
        if f2.rank(cols) == n:
            assert inv == f2.preimages(cols, n)
            assert [f2.apply(cols, x) for x in inv] == [1 << i for i in range(n)]
        else:
            assert inv is None
            singular += 1
    assert singular > 100
    assert f2.inverse([1, 2], 3) is None  # not square


def test_inverse_of_sparse_matrices_where_bits_have_one_column():
    """Bits one column alone has pivot without elimination (swizzles, permutations): checked on
    permutations with a few XORs added, and singular ones (a column with two such bits)."""
    import random

    from bankproof.models import f2

    rng = random.Random(7)
    singular = 0
    for _ in range(3000):
        n = rng.randint(1, 16)
        cols = [1 << b for b in rng.sample(range(n), n)]
        for _ in range(rng.randint(0, 4)):
            cols[rng.randrange(n)] ^= 1 << rng.randrange(n)
        inv = f2.inverse(cols, n)
        if f2.rank(cols) == n:
            assert [f2.apply(cols, x) for x in inv] == [1 << i for i in range(n)]
        else:
            assert inv is None
            singular += 1
    assert singular > 100
    assert f2.inverse([0b011, 0b100, 0b100], 3) is None  # bits 0 and 1 only in column 0
