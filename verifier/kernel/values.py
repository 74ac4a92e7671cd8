"""Per-thread values of the PTX machine: every register holds one 64-bit pattern per thread and
whether it is known there (a loaded value, a parameter not given or anything computed from them is
not). Integer arithmetic is exact at the instruction's width, wraparound included; floating-point
results are never addresses and are left unknown.

>>> v = arith("mul.wide.s32", [Value.const(-3, 2), Value.const(4, 2)])
>>> v.v.tolist(), v.k.tolist()
([-12, -12], [True, True])
>>> arith("shr.u64", [Value.const(-1, 1), Value.const(60, 1)]).v.tolist()
[15]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from bankproof.verifier.ptx.forms import measured
from bankproof.verifier.ptx.machine import compute

FLOAT = re.compile(
    r"\.(?:b?f\d+(?:x\d)?|e[45]m[23]\w*|tf32|rn|rz|rm|rp|rni|rzi|rmi|rpi|sat|ftz|approx)(?:\.|$)"
)
M32 = 0xFFFFFFFF


@dataclass(frozen=True)
class Value:
    """One register: ``v`` the bit patterns (int64), ``k`` where they are known (bool), per thread."""

    v: np.ndarray
    k: np.ndarray

    @staticmethod
    def const(x: int, n: int) -> Value:
        return Value(np.full(n, x, dtype=np.int64), np.ones(n, dtype=bool))

    @staticmethod
    def unknown(n: int) -> Value:
        return Value(np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool))

    def merge(self, new: Value, where: np.ndarray) -> Value:
        """``new`` in the threads of ``where``, this value elsewhere."""
        if where.all():
            return new
        return Value(np.where(where, new.v, self.v), np.where(where, new.k, self.k))


def width(opcode: str) -> int:
    for part in reversed(opcode.split(".")):
        if part[:1] in "usb" and part[1:].isdigit():
            return int(part[1:])
    return 32


def _u(x: np.ndarray, w: int) -> np.ndarray:
    """``x`` as an unsigned ``w``-bit number (uint64 for 64 bits)."""
    return x.view(np.uint64) if w >= 64 else x & ((1 << w) - 1)


def _s(x: np.ndarray, w: int) -> np.ndarray:
    if w >= 64:
        return x
    x = x & ((1 << w) - 1)
    return np.where(x >= (1 << (w - 1)), x - (1 << w), x)


def _wrap(x: np.ndarray, w: int) -> np.ndarray:
    if x.dtype == np.uint64:
        x = x.view(np.int64)
    return x if w >= 64 else x & ((1 << w) - 1)


def _mul(parts: list[str], a: np.ndarray, b: np.ndarray, w: int) -> np.ndarray | None:
    signed = any(p[:1] == "s" and p[1:].isdigit() for p in parts)
    x, y = (_s(a, w), _s(b, w)) if signed else (_u(a, w), _u(b, w))
    if "wide" in parts:
        return (x.astype(np.int64) * y.astype(np.int64)) if w <= 32 else None
    if "hi" in parts:
        if w > 32:
            return None  # 128-bit products: not needed for addresses
        return _wrap((x.astype(np.int64) * y.astype(np.int64)) >> w, w)
    if "24" in "".join(parts):
        return _wrap(_s(a, 24) * _s(b, 24), w) if signed else _wrap(_u(a, 24) * _u(b, 24), w)
    return _wrap(x.astype(np.int64) * y.astype(np.int64) if w <= 32 else (x * y), w)


def _compare(parts: list[str], a: np.ndarray, b: np.ndarray, w: int) -> np.ndarray | None:
    cmp = parts[1]
    signed = any(p[:1] == "s" and p[1:].isdigit() for p in parts)
    x, y = (_s(a, w), _s(b, w)) if signed else (_u(a, w), _u(b, w))
    table = {
        "eq": np.equal,
        "ne": np.not_equal,
        "lt": np.less,
        "le": np.less_equal,
        "gt": np.greater,
        "ge": np.greater_equal,
        "lo": np.less,
        "ls": np.less_equal,
        "hi": np.greater,
        "hs": np.greater_equal,
    }
    f = table.get(cmp)
    return None if f is None else f(x, y).astype(np.int64)


def _bits(parts: list[str], a: np.ndarray, w: int) -> np.ndarray | None:
    x = _u(a, w).astype(np.uint64)
    if parts[0] == "popc":
        return np.array([bin(int(t)).count("1") for t in x], dtype=np.int64)
    if parts[0] == "clz":
        return np.array([w - int(t).bit_length() for t in x], dtype=np.int64)
    if parts[0] == "brev":
        return np.array([int(f"{int(t):0{w}b}"[::-1], 2) for t in x], dtype=np.uint64).view(np.int64)
    if parts[0] == "bfind":  # the PTX ISA's pseudo-code: a negative signed input is inverted first
        signed = any(p[:1] == "s" and p[1:].isdigit() for p in parts)
        out = []
        for t in (int(t) for t in x):
            if signed and t >> (w - 1) & 1:
                t = ~t & ((1 << w) - 1)
            d = t.bit_length() - 1 if t else M32
            out.append(w - 1 - d if "shiftamt" in parts and d != M32 else d)
        return np.array(out, dtype=np.int64)
    return None


def _shf(parts: list[str], a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``shf.{l,r}.{wrap,clamp}.b32 d, a, b, c``: a funnel shift of ``{b, a}`` by ``c``."""
    n = (c & 31) if "wrap" in parts else np.minimum(c & M32, 32)
    both = ((b & M32) << 32) | (a & M32)
    if "l" in parts:
        return ((both << n) >> 32) & M32
    return (both >> n) & M32


def arith(opcode: str, srcs: list[Value]) -> Value | None:
    """The result of one computing instruction on known and unknown sources (``None``: the machine
    does not evaluate this opcode; its result is unknown)."""
    if not srcs or not measured(opcode):  # only forms the GPU measured equal are evaluated
        return None
    parts = opcode.split(".")
    if FLOAT.search(opcode) and parts[0] not in ("mov", "cvta", "selp"):
        return None
    k = np.logical_and.reduce([s.k for s in srcs]) if len(srcs) > 1 else srcs[0].k
    vals = [np.where(s.k, s.v, 1) for s in srcs]  # an unknown divisor must not fault
    w = width(opcode)
    base = parts[0]
    out = None
    if base == "mul" and len(vals) >= 2:
        out = _mul(parts, vals[0], vals[1], w)
    elif base == "mad" and len(vals) >= 3:
        prod = _mul([p for p in parts if p != "cc"], vals[0], vals[1], w)
        out = None if prod is None else (_wrap(prod + vals[2], w) if "wide" not in parts else prod + vals[2])
    elif base == "setp" and len(vals) >= 2 and parts[2:3] not in (["and"], ["or"], ["xor"]):
        out = _compare(parts, vals[0], vals[1], w)
    elif base == "shr" and w >= 64 and not parts[1].startswith("s"):
        out = (vals[0].view(np.uint64) >> np.minimum(vals[1], 63).astype(np.uint64)).view(np.int64)
        out = np.where(vals[1] >= 64, 0, out)
    elif base in ("popc", "clz", "brev", "bfind"):
        out = _bits(parts, vals[0], w)
    elif base == "shf" and len(vals) >= 3:
        out = _shf(parts, *vals[:3])
    elif base == "abs":
        out = _wrap(np.abs(_s(vals[0], w)), w)
    elif base == "cnot":
        out = (vals[0] == 0).astype(np.int64)
    else:
        raw = compute(opcode, vals, [])
        out = None if raw is None else np.asarray(raw, dtype=np.int64)
    if out is None:
        return None
    return Value(np.asarray(out, dtype=np.int64), k.copy())


def shuffle(parts: list[str], a: Value, b: Value, c: Value, lanes_on: np.ndarray) -> Value:
    """``shfl.sync.MODE d, a, b, c, mask`` as the PTX ISA defines it, per warp: ``c`` packs the clamp
    (bits 0-4) and the segment mask (bits 8-12); a source lane outside the segment or not taking
    part gives the thread its own ``a``."""
    n = len(a.v)
    t = np.arange(n)
    lane, base = t % 32, t - t % 32
    bv, cv = b.v & 31, c.v
    clamp, seg = cv & 31, (cv >> 8) & 31
    max_lane = (lane & seg) | (clamp & ~seg & 31)
    min_lane = lane & seg
    mode = parts[2] if len(parts) > 2 else ""
    if mode == "up":
        j = lane - bv
        ok = j >= max_lane
    elif mode == "down":
        j = lane + bv
        ok = j <= max_lane
    elif mode == "bfly":
        j = lane ^ bv
        ok = j <= max_lane
    elif mode == "idx":
        j = min_lane | (bv & ~seg & 31)
        ok = j <= max_lane
    else:
        return Value.unknown(n)
    j = np.where(ok, j, lane)
    src = np.clip(base + j, 0, n - 1)
    known = a.k[src] & b.k & c.k & lanes_on[src]
    return Value(a.v[src], known)


def shuffle_in_range(parts: list[str], b: Value, c: Value) -> Value:
    """The predicate of ``shfl.sync d|p``: whether the source lane lies in the thread's segment
    (the PTX ISA's ``pval``), known where ``b`` and ``c`` are."""
    n = len(b.v)
    lane = np.arange(n) % 32
    bv, cv = b.v & 31, c.v
    clamp, seg = cv & 31, (cv >> 8) & 31
    max_lane = (lane & seg) | (clamp & ~seg & 31)
    mode = parts[2] if len(parts) > 2 else ""
    if mode == "up":
        ok = lane - bv >= max_lane
    elif mode == "down":
        ok = lane + bv <= max_lane
    elif mode == "bfly":
        ok = (lane ^ bv) <= max_lane
    elif mode == "idx":
        ok = ((lane & seg) | (bv & ~seg & 31)) <= max_lane
    else:
        return Value.unknown(n)
    return Value(ok.astype(np.int64), b.k & c.k)


def vote(parts: list[str], p: Value, group: np.ndarray) -> Value:
    """``vote.sync.MODE`` over each warp's threads in ``group``: ``ballot`` the mask of lanes whose
    ``p`` is set, ``all``/``any``/``uni`` as predicates; known where every taking lane's ``p`` is."""
    n = len(p.v)
    bits = per_warp(group & (p.v != 0))
    known = ~(per_warp(group & ~p.k) != 0)
    if "ballot" in parts:
        return Value(bits, known)
    mine = per_warp(group)
    if "all" in parts:
        return Value((bits == mine).astype(np.int64), known)
    if "any" in parts:
        return Value((bits != 0).astype(np.int64), known)
    if "uni" in parts:
        return Value(((bits == mine) | (bits == 0)).astype(np.int64), known)
    return Value.unknown(n)


def elect(mask: Value, group: np.ndarray) -> list[Value]:
    """``elect.sync d|p, mask``: per warp, the lowest lane of ``group`` in ``mask`` (``d``) and
    whether this thread is it (``p``)."""
    lane = np.arange(len(mask.v)) % 32
    bits = per_warp(group & (((mask.v >> lane) & 1) == 1))
    low = np.array([(int(b) & -int(b)).bit_length() - 1 for b in bits], dtype=np.int64)
    return [Value(low, mask.k.copy()), Value((lane == low).astype(np.int64), mask.k.copy())]


def collective(opcode: str, srcs: list[Value], group: np.ndarray, dests: int) -> list[Value | None]:
    """A warp collective's results (``shfl``, ``vote``, ``activemask``, ``elect``) over the threads
    of ``group``: unknown where the GPU did not measure the form."""
    parts = opcode.split(".")
    if parts[0] in ("shfl", "vote") and not measured(opcode):
        return [None] * dests
    if parts[0] == "shfl":
        return [shuffle(parts, srcs[0], srcs[1], srcs[2], group), shuffle_in_range(parts, srcs[1], srcs[2])]
    if parts[0] == "vote":
        return [vote(parts, srcs[0], group)]
    if parts[0] == "activemask":
        return [Value(per_warp(group), np.ones(len(group), bool))]
    return list(elect(srcs[0], group))


def per_warp(mask: np.ndarray) -> np.ndarray:
    """For every thread, the 32-bit mask of its warp's lanes where ``mask`` holds."""
    n = len(mask)
    bits = (mask.reshape(n // 32, 32).astype(np.int64) << np.arange(32)).sum(axis=1)
    return np.repeat(bits, 32)


def immediate(t: str) -> int:
    """A PTX integer or float-bits immediate (``0x1F``, ``-8``, ``017``, ``0f3F800000``, ``5U``) as int64."""
    t = t.rstrip("Uu")
    neg = t.startswith("-")
    t = t.lstrip("-")
    if t[:2] in ("0f", "0F", "0d", "0D"):
        v = int(t[2:], 16)
    else:
        v = int(t, 0) if not (t.startswith("0") and t[1:].isdigit()) else int(t, 8)
    return as_i64(-v if neg else v)


def as_i64(v: int) -> int:
    """``v`` modulo 2^64 as a signed 64-bit number (the machine keeps every value in int64)."""
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >= 1 << 63 else v


def special_registers(launch, n: int) -> dict:
    """The special registers of one CTA of ``launch`` (``n`` threads, padded to warps): per-thread
    arrays (``%tid``, ``%laneid``, lane masks) or numbers (``%ctaid``, ``%ntid``, the cluster's, which
    is one CTA unless launched as a cluster)."""
    tid = np.arange(n)
    bx, by, _ = launch.block
    return {
        "%tid.x": tid % bx,
        "%tid.y": (tid // bx) % by,
        "%tid.z": tid // (bx * by),
        "%laneid": tid % 32,
        "%ntid.x": bx,
        "%ntid.y": by,
        "%ntid.z": launch.block[2],
        "%ctaid.x": launch.cta[0],
        "%ctaid.y": launch.cta[1],
        "%ctaid.z": launch.cta[2],
        "%nctaid.x": launch.grid[0],
        "%nctaid.y": launch.grid[1],
        "%nctaid.z": launch.grid[2],
        "%cluster_ctarank": 0,
        "%cluster_nctarank": 1,
        "%is_explicit_cluster": 0,
        "%cluster_ctaid.x": 0,
        "%cluster_ctaid.y": 0,
        "%cluster_ctaid.z": 0,
        "%cluster_nctaid.x": 1,
        "%cluster_nctaid.y": 1,
        "%cluster_nctaid.z": 1,
        "%clusterid.x": launch.cta[0],
        "%clusterid.y": launch.cta[1],
        "%clusterid.z": launch.cta[2],
        "%nclusterid.x": launch.grid[0],
        "%nclusterid.y": launch.grid[1],
        "%nclusterid.z": launch.grid[2],
        "%dynamic_smem_size": launch.dynamic_smem,
        "%lanemask_eq": 1 << (tid % 32),
        "%lanemask_lt": (1 << (tid % 32)) - 1,
        "%lanemask_le": (2 << (tid % 32)) - 1,
        "%lanemask_gt": (0xFFFFFFFF << (tid % 32 + 1)) & 0xFFFFFFFF,
        "%lanemask_ge": (0xFFFFFFFF << (tid % 32)) & 0xFFFFFFFF,
    }
