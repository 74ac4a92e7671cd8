"""The CuTe DSL as the oracle of bankproof's reading of padded CuTe layouts: random layouts whose
strides skip elements (``(32,128):(132,1)``, nested modes, either major order, some composed with a
swizzle, some whose offsets overlap or follow no padding) are built by the DSL on the CPU, and each
one's offset at every index, ``layout(i)``, is written with the DSL's print of the layout to a JSON
table that ``tests/test_cute_padded_oracle.py`` holds bankproof's reading to.

    python -m lab.cute_padded_oracle tests/data/cute_padded_dsl.json   # with nvidia-cutlass-dsl

(The DSL is about 300 MB, so it is not a test dependency: the table is committed.)
"""

from __future__ import annotations

import json
import os
import random
import sys

os.environ.setdefault("CUTE_DSL_ARCH", "sm_90a")
SEED, CASES = 20261128, 160
SWIZZLES = ((1, 2, 3), (2, 3, 3), (3, 3, 3), (3, 4, 3), (2, 0, 4))


def _mode(rng: random.Random, size: int, stride: int, nested: bool):
    """One top-level mode of ``size`` elements at ``stride``, split in two sub-modes when nested
    (the second strided past the first, with padding of its own)."""
    if not nested or size < 4:
        return size, stride
    low = 1 << rng.randint(1, size.bit_length() - 2)
    high = size // low
    return (low, high), (stride, stride * low + rng.choice([0, 0, stride, 4]))


def plan(rng: random.Random) -> tuple:
    """(shape, stride, swizzle or None): two or three modes of powers of two, strides laid out in a
    random major order with padding after each, now and then an arbitrary stride."""
    rank = rng.choice([2, 2, 2, 3])
    sizes = [1 << rng.randint(1, 6 if rank == 2 else 4) for _ in range(rank)]
    order = list(range(rank))
    rng.shuffle(order)
    strides = [0] * rank
    acc = 1
    for i in order:
        strides[i] = acc
        acc = acc * sizes[i] + rng.choice([0, 0, 1, 4, 8, 16, 3])
    if rng.random() < 0.15:
        strides[rng.randrange(rank)] = rng.randint(1, 300)
    modes = [_mode(rng, s, t, rng.random() < 0.3) for s, t in zip(sizes, strides)]
    swizzle = rng.choice(SWIZZLES) if rng.random() < 0.2 else None
    return tuple(m[0] for m in modes), tuple(m[1] for m in modes), swizzle


def cases(seed: int = SEED, n: int = CASES) -> list[dict]:
    import cutlass.cute as cute

    rng = random.Random(seed)
    plans = [plan(rng) for _ in range(n)]
    out: list[dict] = []

    plain = [p for p in plans if p[2] is None]
    swizzled = [p for p in plans if p[2] is not None]

    @cute.jit
    def trace():  # two loops: the DSL turns an `if` in a traced function into a runtime branch
        for shape, stride, _ in plain:
            lay = cute.make_layout(shape, stride=stride)
            out.append({"layout": str(lay), "offsets": [lay(i) for i in range(cute.size(lay))]})
        for shape, stride, sw in swizzled:
            lay = cute.make_composed_layout(cute.make_swizzle(*sw), 0, cute.make_layout(shape, stride=stride))
            out.append({"layout": str(lay), "offsets": [lay(i) for i in range(cute.size(lay))]})

    trace()
    return out


def main(argv: list[str]) -> int:
    from importlib.metadata import version

    table = {"dsl": f"nvidia-cutlass-dsl {version('nvidia-cutlass-dsl')}", "seed": SEED, "cases": cases()}
    rows = ",\n".join(json.dumps(c, separators=(",", ":")) for c in table.pop("cases"))
    head = json.dumps(table)[:-1]
    with open(argv[0], "w") as f:
        f.write(f'{head}, "cases": [\n{rows}\n]}}\n')
    print(f"{rows.count(chr(10)) + 1} padded layouts written to {argv[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
