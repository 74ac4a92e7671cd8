"""Per-layout speed against the peers (issue: ten times Triton's helper per layout), side by side in
one process on the same 1,000 random 2,048-element f16 layouts (a CuTe swizzle over a random
permutation of power-of-two strides, 64x32) read with 128-bit loads (Triton's blocked layout, 8
elements a thread): bankproof's API (``verify``, the enumeration engine: the question the peers
answer) from the CuTe text and from the layout's bases (the per-call verdict is from bases, as
Triton's helper is given them); Triton 3.9.0's ``ttgl.bank_conflicts``
(through ``triton._filecheck.run_parser``, as a Gluon user calls it; given the bases, parsing not
timed); tensor-layouts' ``per_group_bank_conflicts`` on the same thread-to-offset map (checked equal
to bankproof's offsets): like ``verify`` it answers for every warp of the access (its
``bank_conflicts`` looks at the first 32 threads only, a quarter of the question; timed too, for
reference). A peer that is not installed is skipped with a message.

    python bench/per_layout.py
"""

from __future__ import annotations

import contextlib
import io
import random
import re
import time
import warnings

from bankproof.models.access import element_offsets
from bankproof.models.notation import parse_layout

import bankproof

N = 1000
SHAPE = (64, 32)
LOAD = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
TRITON_X, TENSOR_LAYOUTS_X, BATCH_X = 10.0, 100.0, 50.0


def random_layouts(n: int, seed: int = 0) -> list[tuple[str, tuple, tuple]]:
    """(CuTe text, swizzle, strides) of ``n`` random layouts: ``Swizzle<B,3,S>`` over the 64x32
    tensor's eleven coordinate bits sent to a random permutation of the offsets' bits."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        strides = [1 << i for i in range(11)]
        rng.shuffle(strides)
        b = rng.randint(0, 3)
        sw = (b, 3, rng.randint(max(b, 1), 5))
        rows, cols = ",".join(map(str, strides[:6])), ",".join(map(str, strides[6:]))
        text = f"Swizzle<{sw[0]},{sw[1]},{sw[2]}> o ((2,2,2,2,2,2),(2,2,2,2,2)):(({rows}),({cols}))"
        out.append((text, sw, tuple(strides)))
    return out


def per_layout_ms(fn, items) -> float:
    for x in items[:20]:  # warm (imports, first-call setup)
        fn(x)
    t = time.perf_counter()
    for x in items[20:]:
        fn(x)
    return (time.perf_counter() - t) / max(1, len(items) - 20) * 1e3


def bankproof_text(item) -> int:
    r = bankproof.verify(item[0], load=LOAD, shape=SHAPE, dtype="f16", engines="enum")
    return r.accesses[0].wavefronts


def triton_helper():
    """Triton's count as a callable on a layout's offset bases, or the reason it is skipped."""
    try:
        from triton._filecheck import run_parser
        from triton.backends.compiler import GPUTarget
        from triton.experimental import gluon
        from triton.experimental.gluon import language as ttgl
    except ImportError as e:
        return f"triton not installed ({e})"
    warnings.filterwarnings("ignore")

    @gluon.jit
    def probe(D: ttgl.constexpr, S: ttgl.constexpr):  # noqa: N803 - Triton constexpr style
        ttgl.static_print("BANK_CONFLICTS", ttgl.bank_conflicts(D, S))

    d = parse_layout(LOAD, SHAPE).layout.as_dict()
    dist = ttgl.DistributedLinearLayout(d["register"], d["lane"], d["warp"], [], list(SHAPE))
    dtype = ttgl.distributed_type(ttgl.float16, list(SHAPE), dist)

    def count(offset_bases) -> int:
        shared = ttgl.SharedLinearLayout(offset_bases)
        s = ttgl.shared_memory_descriptor_type(ttgl.float16, list(SHAPE), shared, list(SHAPE))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            run_parser(probe, kwargs={"D": dtype, "S": s}, target=GPUTarget("cuda", 90, 32))
        return int(re.search(r"BANK_CONFLICTS (\d+)", out.getvalue()).group(1))

    return count


def tensor_layouts_helper():
    """tensor-layouts' count as a callable on a random layout (its own objects), or why skipped."""
    try:
        import tensor_layouts as tl
        from tensor_layouts.analysis import bank_conflicts, per_group_bank_conflicts
    except ImportError as e:
        return f"tensor-layouts not installed ({e})"
    tv = tl.Layout(((4, 8, 4), 8), ((512, 1, 8), 64))  # (thread, value) -> coordinate of LOAD

    def build(item):
        _, sw, strides = item
        mem = tl.ComposedLayout(tl.Swizzle(*sw), tl.Layout(((2,) * 6, (2,) * 5), (strides[:6], strides[6:])))
        return tl.compose(mem, tv)

    def count(item) -> int:  # every warp, as verify answers
        return per_group_bank_conflicts(build(item), element_bytes=2)["worst_max_ways"]

    def first_warp(item) -> int:
        return bank_conflicts(build(item), element_bytes=2)["max_ways"]

    return count, build, first_warp


def main() -> None:
    items = random_layouts(N)
    bases = [parse_layout(t, SHAPE, dtype="f16").layout for t, _, _ in items]
    dist = parse_layout(LOAD, SHAPE).layout
    ours_text = per_layout_ms(bankproof_text, items)
    pairs = list(zip(items, bases, strict=True))
    ours_bases = per_layout_ms(
        lambda p: bankproof.verify(p[1], load=dist, shape=SHAPE, dtype="f16", engines="enum"), pairs
    )
    print(f"bankproof verify: {ours_text:.3f} ms a layout from CuTe text, {ours_bases:.3f} ms from bases")
    bankproof.verify_many(bases[:20], load=dist, shape=SHAPE, dtype="f16")  # warm
    times = []
    for _ in range(7):  # the median of seven runs of the whole batch
        t = time.perf_counter()
        many = bankproof.verify_many(bases[20:], load=dist, shape=SHAPE, dtype="f16")
        times.append(time.perf_counter() - t)
    batch = sorted(times)[3] / (N - 20) * 1e3
    for m, got in zip(bases[20:120], many.layouts[:100], strict=True):  # the same answers
        want = bankproof.verify(m, load=dist, shape=SHAPE, dtype="f16", engines="enum").accesses[0]
        assert (got[0].wavefronts, got[0].ideal) == (want.wavefronts, want.ideal)
    print(f"bankproof verify_many: {batch:.4f} ms a layout from bases (equal to verify on the 100 checked)")
    verdicts = []
    tri = triton_helper()
    if isinstance(tri, str):
        print(f"Triton's helper skipped: {tri}")
    else:
        theirs = per_layout_ms(lambda m: tri(m.as_dict()["offset"]), bases)
        ratio = theirs / ours_bases  # like for like: both given the layout's bases
        print(f"Triton 3.9.0 ttgl.bank_conflicts: {theirs:.3f} ms a layout (given bases); verify from bases "
              f"{ratio:.1f}x faster, from CuTe text {theirs / ours_text:.1f}x")  # fmt: skip
        verdicts.append((f"API {ratio:.1f}x Triton's helper (target >= {TRITON_X:g}x)", ratio >= TRITON_X))
        many_x = theirs / batch
        verdicts.append((f"batch {many_x:.1f}x Triton's helper (target >= {BATCH_X:g}x)", many_x >= BATCH_X))
    peer = tensor_layouts_helper()
    if isinstance(peer, str):
        print(f"tensor-layouts skipped: {peer}")
    else:
        count, build, first_warp = peer
        threads = range(128)  # thread t: lane t % 32 of warp t // 32, 8 rows a warp
        for item, mem in zip(items[:50], bases[:50], strict=True):  # the same map, checked
            off, comp = element_offsets(mem), build(item)
            row = [(t % 32) // 4 + 8 * (t // 32) for t in threads]
            want = [int(off[row[t], (t % 4) * 8 + v]) for t in threads for v in range(8)]
            assert [int(comp(t, v)) for t in threads for v in range(8)] == want, item[0]
        theirs = per_layout_ms(count, items)
        one = per_layout_ms(first_warp, items)
        ratio = theirs / ours_bases  # like for like: every warp, its layout objects built inside the clock
        print(f"tensor-layouts per_group_bank_conflicts (every warp): {theirs:.3f} ms a layout; verify from "
              f"bases {ratio:.1f}x faster, verify_many {theirs / batch:.0f}x; its bank_conflicts (first warp "
              f"only) {one:.3f} ms")  # fmt: skip
        verdicts.append(
            (f"API {ratio:.1f}x tensor-layouts (target >= {TENSOR_LAYOUTS_X:g}x)", ratio >= TENSOR_LAYOUTS_X)
        )
    for what, ok in verdicts:
        print(f"{what}: {'PASS' if ok else 'FAIL'}")


if __name__ == "__main__":
    main()
