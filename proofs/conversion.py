"""Z3 proofs that conversions deliver every element where the destination layout expects it.

- ``shared_roundtrip``: store with A into memory, load with B: every (register, lane, warp,
  block) of B reads the element B names (the A thread holding it wrote it at that address, and
  no other element shares the address).
- ``shuffle_plan_correct``: every round of a warp-shuffle plan hands lane t, from lane src[t],
  the element B expects at its register, and no lane receives into the same register twice.
"""

from __future__ import annotations

import time

import z3
from bankproof.models.access import element_offsets
from bankproof.models.conversion import ShufflePlan
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout
from bankproof.proofs.conflicts import Proof
from bankproof.proofs.encode import ADDR, configure, linear_term

DIMS = ("register", "lane", "warp", "block")


def _flat_cols(lay: LinearLayout) -> list[int]:
    return [lay.pack_dim0_lowest(b) for d in DIMS for b in lay.in_bases(d)]


def _offset_fn(memory: LinearLayout | PaddedLayout, lay: LinearLayout):
    """Z3 function: packed tensor vector (in ``lay``'s out-dim order) -> byte-free element offset."""
    offsets = element_offsets(memory)
    if isinstance(memory, PaddedLayout):
        lin = memory.linear
        inv = LinearLayout((("offset", lin.in_bases("offset")),), lin.out_dims).invert()
        cols = []
        for k in range(lay.out_bits):
            coords = dict(zip(lay.out_dim_names, lay.unpack_dim0_lowest(1 << k)))
            cols.append(inv.apply(**coords)["offset"])

        def fn(t: z3.BitVecRef) -> z3.BitVecRef:
            base = linear_term(cols, t, ADDR)
            off = base
            for interval, pad in memory.intervals:
                off = off + z3.UDiv(base, interval) * pad
            return off

        return fn
    cols = [int(offsets[lay.unpack_dim0_lowest(1 << k)]) for k in range(lay.out_bits)]
    return lambda t: linear_term(cols, t, ADDR)


def shared_roundtrip(
    a: LinearLayout,
    b: LinearLayout,
    store_memory: LinearLayout | PaddedLayout,
    load_memory: LinearLayout | PaddedLayout | None = None,
    timeout_ms: int = 10_000,
    seed: int = 0,
) -> Proof:
    """Prove the shared-memory round trip A -> memory -> B delivers every element correctly
    (``load_memory`` defaults to ``store_memory``; a different one models a buggy lowering)."""
    configure(seed)
    t0 = time.perf_counter()
    load_memory = load_memory or store_memory
    b = b.transpose_outs(a.out_dim_names)
    n_out = a.out_bits
    width = max(n_out, 1)
    witness = b.invert_and_compose(a)  # B inputs -> the A input holding the same element
    x = z3.BitVec("x", max(1, b.in_bits))
    y = linear_term([_pack_inputs(a, c) for c in _input_cols(witness)], x, max(1, a.in_bits))
    coords_b = linear_term(_flat_cols(b), x, width)
    coords_a = linear_term(_flat_cols(a), y, width)
    store_at, load_at = _offset_fn(store_memory, a), _offset_fn(load_memory, a)
    bad_read = z3.Or(coords_a != coords_b, store_at(coords_a) != load_at(coords_b))
    y1, y2 = z3.BitVec("y1", max(1, a.in_bits)), z3.BitVec("y2", max(1, a.in_bits))
    c1, c2 = linear_term(_flat_cols(a), y1, width), linear_term(_flat_cols(a), y2, width)
    clash = z3.And(c1 != c2, store_at(c1) == store_at(c2))
    for name, claim in (("read", bad_read), ("clash", clash)):
        s = z3.Solver()
        s.set("timeout", timeout_ms)
        s.add(claim)
        r = s.check()
        if r == z3.unknown:
            return Proof("unknown", time.perf_counter() - t0, f"solver: {s.reason_unknown()}")
        if r == z3.sat:
            m = s.model()
            if name == "read":
                xv = m.eval(x, model_completion=True).as_long()
                expected = b.unpack_dim0_lowest(m.eval(coords_b, model_completion=True).as_long())
                stored = _element_at(
                    a, store_memory, m.eval(load_at(coords_b), model_completion=True).as_long()
                )
                detail = {"destination_input": _split(b, xv), "expects": list(expected), "reads": stored}
                return Proof(
                    "refuted",
                    time.perf_counter() - t0,
                    "a destination thread reads the wrong element",
                    detail,
                )
            e1 = a.unpack_dim0_lowest(m.eval(c1, model_completion=True).as_long())
            e2 = a.unpack_dim0_lowest(m.eval(c2, model_completion=True).as_long())
            return Proof(
                "refuted",
                time.perf_counter() - t0,
                "two elements share an address",
                {"elements": [list(e1), list(e2)]},
            )
    return Proof("proved", time.perf_counter() - t0)


def _input_cols(lay: LinearLayout) -> list[tuple[int, ...]]:
    return [b for d in DIMS for b in lay.in_bases(d)]


def _pack_inputs(a: LinearLayout, coords: tuple[int, ...]) -> int:
    """Pack an A-input (register, lane, warp, block) tuple, as produced by invert_and_compose."""
    out, shift = 0, 0
    for d, c in zip(DIMS, coords):
        out |= int(c) << shift
        shift += len(a.in_bases(d))
    return out


def _split(lay: LinearLayout, x: int) -> dict[str, int]:
    out, shift = {}, 0
    for d in DIMS:
        n = len(lay.in_bases(d))
        out[d] = (x >> shift) & ((1 << n) - 1)
        shift += n
    return out


def _element_at(lay: LinearLayout, memory, offset: int) -> list[int] | None:
    offs = element_offsets(memory)
    import numpy as np

    hit = np.argwhere(offs == offset)
    return [int(v) for v in hit[0]] if len(hit) else None


def shuffle_plan_correct(
    plan: ShufflePlan, a: LinearLayout, b: LinearLayout, timeout_ms: int = 10_000, seed: int = 0
) -> Proof:
    """Prove every round delivers B's elements and no lane receives a register twice."""
    configure(seed)
    t0 = time.perf_counter()
    sp = plan.space
    b = b.transpose_outs(a.out_dim_names)
    a_reg = [sp.pack_row_major(x) for x in a.in_bases("register")]
    b_reg = [sp.pack_row_major(x) for x in b.in_bases("register")]
    a_lane = [sp.pack_row_major(x) for x in a.in_bases("lane")]
    b_lane = [sp.pack_row_major(x) for x in b.in_bases("lane")]
    warp = [sp.pack_row_major(x) for x in a.in_bases("warp")]
    lane_bits = max(1, len(a_lane))
    t = z3.BitVec("t", lane_bits)
    w = z3.BitVec("w", max(1, len(warp)))
    d = max(1, sp.bits)

    def table(values: list[int], at: z3.BitVecRef, bits: int) -> z3.BitVecRef:
        out = z3.BitVecVal(values[-1], bits)
        for k in range(len(values) - 2, -1, -1):
            out = z3.If(at == k, z3.BitVecVal(values[k], bits), out)
        return out

    nreg_a, nreg_b = max(1, len(a_reg)), max(1, len(b_reg))
    # Vector elements: V's register positions in A and in B.
    v_pos = [(a_reg.index(v), b_reg.index(v)) for v in plan.vec]
    for i, rnd in enumerate(plan.rounds):
        src = table(rnd.src, t, lane_bits)
        send = table(rnd.send, src, nreg_a)
        recv = table(rnd.recv, t, nreg_b)
        wterm = linear_term(warp, w, d) if warp else z3.BitVecVal(0, d)
        checks = [(0, 0)] + [(1 << pa, 1 << pb) for pa, pb in v_pos]
        for da, db in checks:
            sent = linear_term(a_reg, send ^ da, d) ^ linear_term(a_lane, src, d) ^ wterm
            want = linear_term(b_reg, recv ^ db, d) ^ linear_term(b_lane, t, d) ^ wterm
            s = z3.Solver()
            s.set("timeout", timeout_ms)
            s.add(sent != want)
            r = s.check()
            if r == z3.unknown:
                return Proof("unknown", time.perf_counter() - t0, f"solver: {s.reason_unknown()}")
            if r == z3.sat:
                m = s.model()
                lane = m.eval(t, model_completion=True).as_long()
                return Proof(
                    "refuted",
                    time.perf_counter() - t0,
                    f"round {i}: lane {lane} receives the wrong element",
                    {
                        "round": i,
                        "lane": lane,
                        "from_lane": rnd.src[lane],
                        "receives": list(sp.unpack_row_major(m.eval(sent, model_completion=True).as_long())),
                        "expects": list(sp.unpack_row_major(m.eval(want, model_completion=True).as_long())),
                    },
                )
    # No lane receives into one register in two rounds.
    n = len(plan.rounds)
    if n > 1:
        i1, i2 = z3.BitVec("i1", 16), z3.BitVec("i2", 16)

        def recv_at(i: z3.BitVecRef) -> z3.BitVecRef:
            out = table(plan.rounds[-1].recv, t, nreg_b)
            for k in range(n - 2, -1, -1):
                out = z3.If(i == k, table(plan.rounds[k].recv, t, nreg_b), out)
            return out

        s = z3.Solver()
        s.set("timeout", timeout_ms)
        s.add(z3.ULT(i1, i2), z3.ULT(i2, n), recv_at(i1) == recv_at(i2))
        r = s.check()
        if r == z3.unknown:
            return Proof("unknown", time.perf_counter() - t0, f"solver: {s.reason_unknown()}")
        if r == z3.sat:
            m = s.model()
            return Proof(
                "refuted",
                time.perf_counter() - t0,
                "a lane receives one register twice",
                {
                    "lane": m.eval(t, model_completion=True).as_long(),
                    "rounds": [m.eval(i1).as_long(), m.eval(i2).as_long()],
                },
            )
    return Proof("proved", time.perf_counter() - t0)
