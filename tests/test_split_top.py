"""``split_top``'s fast path for PTX operand lists (balanced ``[...]`` holding no comma) splits as
the bracket-depth walk does, on random texts of brackets, commas and words (well formed or not)."""

from __future__ import annotations

import random

from bankproof.models.notation.mlir import split_top


def _walk(text: str) -> list[str]:
    """The reference: split at commas where the bracket depth is 0 (none opened: every comma)."""
    if not any(c in "<[({" for c in text):
        return [p.strip() for p in text.strip().split(",")]
    parts, depth, cur = [], 0, []
    for c in text:
        depth += (c in "<[({") - (c in ">])}")
        if c == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    return [*parts, "".join(cur).strip()]


def test_the_fast_path_splits_as_the_walk_does():
    rng = random.Random(7)
    for alphabet in ("ab%r1 ,[]{}<>()+4", "ab ,[]+4", "%r1, [+4]"):
        for _ in range(20_000):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 16)))
            assert split_top(text) == _walk(text), text
    assert split_top("[%rd1+4], %r2") == ["[%rd1+4]", "%r2"]
    assert split_top("{%r1, %r2}, [%rd3]") == ["{%r1, %r2}", "[%rd3]"]
