"""The spec and notation parsers fuzzed: any text or spec table either parses or raises the
user-facing ``InputError`` (exit 2); nothing else escapes, and every input finishes quickly."""

from __future__ import annotations

import contextlib

import pytest
from bankproof.models.errors import InputError
from bankproof.models.notation import parse_layout
from bankproof.verifier.api.spec_file import parse_spec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.fuzz

TOKENS = [
    "#ttg.", "blocked", "swizzled_shared", "nvmma_shared", "linear", "slice", "dot_op", "nvidia_mma",
    "padded_shared", "shared_linear", "<{", "}>", "<", ">", "{", "}", "[", "]", "(", ")", ",", "=", ":",
    " ", "sizePerThread", "threadsPerWarp", "warpsPerCTA", "order", "vec", "perPhase", "maxPhase",
    "register", "lane", "warp", "offset", "parent", "opIdx", "kWidth", "dim", "Sw<", "o", "_8", "0", "1",
    "2", "3", "4", "8", "16", "32", "-1", "m", "n", "*", "+", "^", "//", "%", "<<", "x", "#a", "#a = ",
    "\n", "swizzlingByteWidth", "transposed", "true", "elementBitWidth", "versionMajor", "instrShape",
]  # fmt: skip
texts = st.lists(st.sampled_from(TOKENS), max_size=40).map("".join) | st.text(max_size=60)
shapes = st.lists(st.sampled_from([1, 2, 4, 8, 16, 32, 3, 0]), min_size=1, max_size=3)
FUZZ = settings(max_examples=5000, deadline=2000, suppress_health_check=list(HealthCheck))


@FUZZ
@given(texts, shapes)
def test_notation_parser_never_crashes(text, shape):
    with contextlib.suppress(InputError):
        parse_layout(text, shape)


scalars = st.one_of(
    st.integers(-3, 70), st.text(max_size=12), st.sampled_from(TOKENS), st.none(), st.booleans()
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.sampled_from(TOKENS), inner, max_size=4),
    max_leaves=20,
)
spec_tables = st.fixed_dictionaries(
    {},
    optional={
        "shape": st.one_of(shapes, values),
        "dtype": st.one_of(st.sampled_from(["f16", "f32", "i8", "bf16", "f13"]), values),
        "dims": values,
        "arch": st.one_of(st.sampled_from(["sm80", "sm90", "sm100"]), values),
        "memory": st.one_of(st.fixed_dictionaries({}, optional={"formula": texts, "triton": texts, "cute": texts, "units": values}), values),
        "access": st.lists(st.fixed_dictionaries({}, optional={"kind": st.sampled_from(["load", "store", "x"]), "instr": values, "layout": st.one_of(st.fixed_dictionaries({}, optional={"triton": texts, "bases": values}), values), "name": values}), max_size=3),
    },
)  # fmt: skip


@FUZZ
@given(spec_tables)
def test_spec_parser_never_crashes(table):
    with contextlib.suppress(InputError):
        parse_spec(table)
