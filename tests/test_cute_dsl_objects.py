"""CuTe DSL layout objects read as objects (``bankproof`` reads a ``Layout``'s ``shape`` and
``stride``, a ``ComposedLayout``'s swizzle, offset and outer layout by their fields,
:mod:`bankproof.models.notation.cute_dsl`), checked against the DSL's own evaluation: 1,000 random
objects (plain and padded strides, nested modes, either major order, some swizzled; the generator
of ``lab/cute_padded_oracle.py`` with a seed of its own), built by the DSL on the CPU; every one
bankproof reads puts every element where ``layout(i)`` does, and every one it refuses is one whose
offsets no padded linear layout gives (the refusal named)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from bankproof.models.access import element_offsets
from bankproof.models.errors import InputError
from bankproof.models.notation import parse_layout
from bankproof.models.notation.cute_dsl import cute_dsl_text

pytest.importorskip("cutlass.cute", reason="the CuTe DSL is the cute-dsl extra")
from lab.cute_padded_oracle import plan  # noqa: E402
from tests.test_cute_padded_oracle import _padded_linear  # noqa: E402

SEED, N = 20261208, 1000


@pytest.fixture(scope="module")
def objects() -> list[tuple[str, list[int], str]]:
    """(bankproof's reading of the object, the DSL's offsets, the DSL's print) per object."""
    import cutlass.cute as cute

    rng = random.Random(SEED)
    plans = [plan(rng) for _ in range(N)]
    plain = [p for p in plans if p[2] is None]
    swizzled = [p for p in plans if p[2] is not None]
    out: list[tuple[str, list[int], str]] = []

    @cute.jit
    def trace():  # loops only: an `if` in a traced function becomes a run-time branch
        for shape, stride, _ in plain:
            lay = cute.make_layout(shape, stride=stride)
            out.append((cute_dsl_text(lay), [lay(i) for i in range(cute.size(lay))], str(lay)))
        for shape, stride, sw in swizzled:
            lay = cute.make_composed_layout(cute.make_swizzle(*sw), 0, cute.make_layout(shape, stride=stride))
            out.append((cute_dsl_text(lay), [lay(i) for i in range(cute.size(lay))], str(lay)))

    trace()
    return out


def test_every_object_is_read_where_the_dsl_puts_it_or_refused_rightly(objects):
    assert len(objects) == N
    read = swizzled = refused = 0
    for text, offsets, printed in objects:
        assert text.removeprefix("cute:").replace(" ", "") == printed.replace(" ", "")  # the same layout
        want = np.array(offsets, dtype=np.int64)
        try:
            layout = parse_layout(text).layout
        except InputError:
            assert not _padded_linear(want), printed
            refused += 1
            continue
        got = element_offsets(layout).reshape(-1, order="F")
        assert got.tolist() == want.tolist(), printed
        read += 1
        swizzled += " o " in text
    print(
        f"\nCuTe DSL objects: {read} read equal element by element ({swizzled} swizzled), {refused} refused"
    )
    assert (read, swizzled, refused) == (741, 55, 259)  # (the seed fixes them)


def test_a_run_time_field_is_refused_naming_it():
    class _Layout:
        shape, stride = (8, 8), (1, object())

    _Layout.__module__ = "cutlass.cute.core"
    with pytest.raises(InputError, match="Layout.stride"):
        parse_layout(_Layout())
