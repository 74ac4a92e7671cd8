"""The GPU as the oracle for the PTX machine's integer semantics: every computing instruction the
machine evaluates (:func:`bankproof.verifier.kernel.values.arith`), at each type and modifier it
takes, run on the device as inline PTX on random and edge operands (0, -1, the extremes, shifts and
bit-field positions past the width, values past 2^53); the results are written as JSON, committed
in ``gpu_checks/results/`` and replayed by ``tests/test_ptx_semantics.py`` against the machine.

    python -m lab.gpu.ptx_semantics run OUT.json     # on the device (CuPy compiles each probe)
    python -m lab.gpu.ptx_semantics replay RECORD     # here: each case against the machine

>>> replay_case({"op": "add.s32", "kinds": ["r", "r", "r"], "in": [5, (1 << 32) - 1], "out": 4})
'equal'
>>> replay_case({"op": "bfind.shiftamt.u32", "kinds": ["r", "r"], "in": [16], "out": 27})
'equal'
"""

from __future__ import annotations

import json
import random
import sys

# (opcode, register kinds: destination then sources; h 16-bit, r 32-bit, l 64-bit, p a predicate
# source given as 0/1 and made with setp) -- the asm is "opcode %0, %1, ..." unless it needs a
# predicate
_R3 = ("r", "r", "r")
_L3 = ("l", "l", "l")
TEMPLATES: list[tuple[str, tuple[str, ...]]] = [
    *[(f"{op}.{t}", _R3) for op in ("add", "sub", "min", "max", "div", "rem") for t in ("s32", "u32")],
    *[(f"{op}.{t}", _L3) for op in ("add", "sub", "min", "max", "div", "rem") for t in ("s64", "u64")],
    *[(f"mul.{m}.{t}", _R3) for m in ("lo", "hi") for t in ("s32", "u32")],
    *[(f"mul.lo.{t}", _L3) for t in ("s64", "u64")],
    *[(f"mul.wide.{t}", ("l", "r", "r")) for t in ("s32", "u32")],
    *[(f"mad.lo.{t}", ("r", "r", "r", "r")) for t in ("s32", "u32")],
    *[(f"mad.wide.{t}", ("l", "r", "r", "l")) for t in ("s32", "u32")],
    *[(f"mul24.lo.{t}", _R3) for t in ("s32", "u32")],
    *[(f"{op}.b32", _R3) for op in ("and", "or", "xor", "shl")],
    *[(f"{op}.b64", ("l", "l", "l")) for op in ("and", "or", "xor")],
    ("shl.b64", ("l", "l", "r")),
    *[(f"shr.{t}", _R3) for t in ("s32", "u32", "b32")],
    *[(f"shr.{t}", ("l", "l", "r")) for t in ("s64", "u64", "b64")],
    *[(f"{op}.b32", ("r", "r")) for op in ("not", "popc", "clz", "brev", "cnot")],
    *[(f"{op}.b64", ("l", "l")) for op in ("not", "brev")],
    *[(f"{op}.b64", ("r", "l")) for op in ("popc", "clz")],
    *[(f"neg.{t}", ("r", "r")) for t in ("s32",)],
    ("neg.s64", ("l", "l")),
    ("abs.s32", ("r", "r")),
    ("abs.s64", ("l", "l")),
    *[(f"bfe.{t}", ("r", "r", "r", "r")) for t in ("s32", "u32")],
    *[(f"bfe.{t}", ("l", "l", "r", "r")) for t in ("s64", "u64")],
    ("bfi.b32", ("r", "r", "r", "r", "r")),
    ("bfi.b64", ("l", "l", "l", "r", "r")),
    *[(f"bfind.{m}{t}", ("r", "r")) for m in ("", "shiftamt.") for t in ("s32", "u32")],
    *[(f"bfind.{m}{t}", ("r", "l")) for m in ("", "shiftamt.") for t in ("s64", "u64")],
    ("prmt.b32", ("r", "r", "r", "r")),
    *[(f"prmt.b32.{m}", ("r", "r", "r", "r")) for m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")],
    *[(f"shf.{d}.{m}.b32", ("r", "r", "r", "r")) for d in ("l", "r") for m in ("wrap", "clamp")],
    *[(f"lop3.b32 LUT{lut}", ("r", "r", "r", "r")) for lut in (0x96, 0xE8, 0xF0, 0x3C, 0x01, 0xFE)],
    *[
        (f"setp.{c}.{t}", ("p", "r", "r"))
        for c in ("eq", "ne", "lt", "le", "gt", "ge")
        for t in ("s32", "u32")
    ],
    *[(f"setp.{c}.u32", ("p", "r", "r")) for c in ("lo", "ls", "hi", "hs")],
    *[(f"setp.{c}.{t}", ("p", "l", "l")) for c in ("lt", "ge") for t in ("s64", "u64")],
    ("selp.b32", ("r", "r", "r", "p")),
    ("selp.b64", ("l", "l", "l", "p")),
    *[(f"cvt.{d}.{s}", ("r", "r")) for d in ("s32", "u32") for s in ("s8", "u8", "s16", "u16")],
    *[(f"cvt.{d}.{s}", ("h", "r")) for d in ("s16", "u16") for s in ("s8", "u8", "s32", "u32")],
    *[(f"cvt.{d}.{s}", ("l", "r")) for d in ("s64", "u64") for s in ("s32", "u32", "s8", "u16")],
    *[(f"cvt.{d}.{s}", ("r", "l")) for d in ("s32", "u32") for s in ("s64", "u64")],
    ("cvt.u32.u32", ("r", "r")),
    ("mov.b32", ("r", "r")),
    ("mov.b64", ("l", "l")),
]
EDGES = [0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256, 0x7F, 0x80, 0xFF, 0x7FFF,
         0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x100000000, (1 << 53) + 1, (1 << 62) + 3,
         (1 << 63) - 1, 1 << 63, (1 << 64) - 1, (1 << 64) - 2, (1 << 64) - 31]  # fmt: skip
CASES_PER = 64


def _operands(rng: random.Random, n: int) -> list[list[int]]:
    """``CASES_PER`` operand tuples of ``n`` values (as 64-bit patterns): edges and random."""
    out = []
    for _ in range(CASES_PER):
        row = []
        for _ in range(n):
            pick = rng.random()
            if pick < 0.55:
                row.append(rng.choice(EDGES))
            elif pick < 0.75:
                row.append(rng.randrange(0, 80))
            else:
                row.append(rng.getrandbits(rng.choice([8, 16, 32, 64])))
        out.append(row)
    return out


_CTYPE = {"h": "unsigned short", "r": "unsigned int", "l": "unsigned long long", "p": "unsigned int"}
_CON = {"h": "h", "r": "r", "l": "l", "p": "r"}


def kernel_source(name: str, op: str, kinds: tuple[str, ...]) -> str:
    """One probe: thread i reads its operands (64-bit patterns), runs ``op`` once, writes the
    destination zero-extended."""
    dst, srcs = kinds[0], kinds[1:]
    opcode, lut = (op.split(" LUT") + [""])[:2]
    loads = "\n".join(f"  {_CTYPE[k]} s{j} = ({_CTYPE[k]})x[i * 4 + {j}];" for j, k in enumerate(srcs))
    ins = ", ".join(f'"{_CON[k]}"(s{j})' for j, k in enumerate(srcs))
    n = len(srcs)
    args = [f"%{j + 1}" for j in range(n)]
    pre = []
    if "p" in srcs:  # a predicate source: setp.ne from the 0/1 operand
        j = srcs.index("p")
        pre.append(f"setp.ne.u32 q, %{j + 1}, 0;")
        args[j] = "q"
    if lut:
        args.append(lut)
    if dst == "p":
        body = f"{opcode} q, {', '.join(args)}; selp.u32 %0, 1, 0, q;"
    else:
        body = f"{opcode} %0, {', '.join(args)};"
    asm = "{ .reg .pred q; " + " ".join(pre) + " " + body + " }"
    return f"""
extern "C" __global__ void {name}(const unsigned long long *x, unsigned long long *y, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
{loads}
  {_CTYPE[dst]} d = 0;
  asm volatile("{asm}" : "={_CON[dst]}"(d) : {ins});
  y[i] = (unsigned long long)d;
}}
"""


def run(out: str) -> None:
    import cupy as cp

    rng = random.Random(55)
    record = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "cases": []}
    for t, (op, kinds) in enumerate(TEMPLATES):
        rows = _operands(rng, len(kinds) - 1)
        name = f"probe_{t}"
        try:
            fn = cp.RawKernel(kernel_source(name, op, kinds), name)
            x = cp.asarray([(r + [0] * 4)[:4] for r in rows], dtype=cp.uint64).ravel()
            y = cp.zeros(len(rows), dtype=cp.uint64)
            fn((1,), (len(rows),), (x, y, cp.int32(len(rows))))
            got = [int(v) for v in y.get()]
        except Exception as e:  # noqa: BLE001 - a form the device refuses is recorded as such
            record["cases"].append(
                {"op": op, "kinds": list(kinds), "error": f"{type(e).__name__}: {e}"[:300]}
            )
            continue
        for r, d in zip(rows, got, strict=True):
            record["cases"].append({"op": op, "kinds": list(kinds), "in": r, "out": d})
    with open(out, "w") as fh:
        json.dump(record, fh)
    print(f"{len(record['cases'])} cases, {sum('error' in c for c in record['cases'])} refused forms")


WIDTH = {"h": 16, "r": 32, "l": 64, "p": 1}


def _pattern(x: int, kind: str) -> int:
    """A source operand as the device's register held it, as the machine holds one (int64)."""
    if kind == "p":
        return int((x & 0xFFFFFFFF) != 0)
    v = x & ((1 << WIDTH[kind]) - 1)
    return v - (1 << 64) if v >> 63 else v


def replay_case(case: dict) -> str:
    """``equal``, ``refused`` (the machine leaves the result unknown) or ``mismatch``: the
    machine's :func:`~bankproof.verifier.kernel.values.arith` on the case's operands."""
    from bankproof.verifier.kernel.values import Value, arith

    op, kinds = case["op"], case["kinds"]
    opcode, _, lut = op.partition(" LUT")
    srcs = [Value.const(_pattern(x, k), 1) for x, k in zip(case["in"], kinds[1:], strict=False)]
    if lut:
        srcs.append(Value.const(int(lut), 1))
    got = arith(opcode, srcs)
    if got is None or not bool(got.k[0]):
        return "refused"
    mask = (1 << WIDTH[kinds[0]]) - 1
    return "equal" if int(got.v[0]) & mask == case["out"] & mask else "mismatch"


def replay(path: str) -> None:
    import gzip
    from collections import Counter

    with open(path, "rb") as fh:
        raw = fh.read()
    record = json.loads(gzip.decompress(raw) if path.endswith(".gz") else raw)
    got, wrong = Counter(), {}
    for c in record["cases"]:
        r = "error" if "error" in c else replay_case(c)
        got[r] += 1
        if r == "mismatch":
            wrong.setdefault(c["op"], c)
    print(dict(got))
    for op, c in wrong.items():
        print(f"{op}: {c['in']} -> device {c['out']}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["run"]:
        run(sys.argv[2])
    elif sys.argv[1:2] == ["replay"]:
        replay(sys.argv[2])
    elif sys.argv[1:2] == ["source"]:
        for t, (op, kinds) in enumerate(TEMPLATES):
            print(kernel_source(f"probe_{t}", op, kinds))
