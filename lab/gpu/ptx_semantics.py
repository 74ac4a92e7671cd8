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
# predicate. Every integer form the machine evaluates, at every type width and modifier it reads.
_REG = {16: "h", 32: "r", 64: "l"}
_INT = [f"{s}{w}" for w in (16, 32, 64) for s in ("s", "u")]
_BITS = ["b16", "b32", "b64"]


def _k(t: str) -> str:
    return _REG[int(t[1:])] if t[1:] in ("16", "32", "64") else "r"


def _templates() -> list[tuple[str, tuple[str, ...]]]:
    out: list[tuple[str, tuple[str, ...]]] = []
    for t in _INT:
        k = _k(t)
        out += [(f"{op}.{t}", (k, k, k)) for op in ("add", "sub", "min", "max", "div", "rem")]
        out += [(f"mul.{m}.{t}", (k, k, k)) for m in ("lo", "hi")]
        out += [(f"mad.{m}.{t}", (k, k, k, k)) for m in ("lo", "hi")]
        if t[1:] != "64":
            wide = _REG[2 * int(t[1:])]
            out += [(f"mul.wide.{t}", (wide, k, k)), (f"mad.wide.{t}", (wide, k, k, wide))]
        if t[0] == "s":
            out += [(f"neg.{t}", (k, k)), (f"abs.{t}", (k, k))]
        out += [(f"setp.{c}.{t}", ("p", k, k)) for c in ("eq", "ne", "lt", "le", "gt", "ge")]
        if t[0] == "u":
            out += [(f"setp.{c}.{t}", ("p", k, k)) for c in ("lo", "ls", "hi", "hs")]
        out += [(f"shr.{t}", (k, k, "r")), (f"selp.{t}", (k, k, k, "p")), (f"mov.{t}", (k, k))]
        out += [(f"setp.lt.{b}.{t}", ("p", k, k, "p")) for b in ("and", "or", "xor")]
    out += [(f"mul24.{m}.{t}", ("r", "r", "r")) for m in ("lo", "hi") for t in ("s32", "u32")]
    for t in _BITS:
        k = _k(t)
        out += [(f"{op}.{t}", (k, k, k)) for op in ("and", "or", "xor")]
        out += [(f"{op}.{t}", (k, k)) for op in ("not", "cnot", "mov")]
        out += [(f"shl.{t}", (k, k, "r")), (f"shr.{t}", (k, k, "r")), (f"selp.{t}", (k, k, k, "p"))]
        out += [(f"setp.{c}.{t}", ("p", k, k)) for c in ("eq", "ne")]
    for t in ("b32", "b64"):
        k = _k(t)
        out += [(f"{op}.{t}", ("r", k)) for op in ("popc", "clz")] + [(f"brev.{t}", (k, k))]
        out += [(f"bfi.{t}", (k, k, k, "r", "r"))]
    for t in ("s32", "u32", "s64", "u64"):
        k = _k(t)
        out += [(f"bfe.{t}", (k, k, "r", "r"))]
        out += [(f"bfind.{m}{t}", ("r", k)) for m in ("", "shiftamt.")]
    out += [("prmt.b32", ("r", "r", "r", "r"))]
    out += [(f"prmt.b32.{m}", ("r", "r", "r", "r")) for m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")]
    out += [(f"shf.{d}.{m}.b32", ("r", "r", "r", "r")) for d in ("l", "r") for m in ("wrap", "clamp")]
    luts = (0x96, 0xE8, 0xF0, 0x3C, 0x01, 0xFE, 0x80, 0x7F, 0xCA, 0x6A)
    out += [(f"lop3.b32 LUT{lut}", ("r", "r", "r", "r")) for lut in luts]
    cvt_types = ["s8", "u8", *_INT]
    for d in cvt_types:
        for s in cvt_types:
            dk = "h" if d[1:] == "8" else _k(d)
            sk = "h" if s[1:] == "8" else _k(s)
            out.append((f"cvt.{d}.{s}", (dk, sk)))
    out += [
        (f"cvt.sat.{d}.{s}", (_k(d), _k(s)))
        for d in ("s32", "u32")
        for s in ("s64", "u64", "s32", "u32")
        if d != s
    ]
    out += [(f"{op}.pred", ("p", "p", "p")) for op in ("and", "or", "xor")]
    out += [("not.pred", ("p", "p")), ("mov.pred", ("p", "p"))]
    out += [("mov.f32", ("r", "r")), ("mov.f64", ("l", "l")), ("selp.f32", ("r", "r", "r", "p"))]
    out += [("selp.f64", ("l", "l", "l", "p"))]
    return out


TEMPLATES = _templates()
# warp-wide forms: a case is one warp (32 lanes' sources, 32 lanes' results)
WARP_TEMPLATES = [
    *[(f"shfl.sync.{m}.b32", ("r", "r", "r", "r")) for m in ("up", "down", "bfly", "idx")],
    *[(f"vote.sync.{m}.pred", ("p", "p")) for m in ("all", "any", "uni")],
    ("vote.sync.ballot.b32", ("r", "p")),
]
EDGES = [0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256, 0x7F, 0x80, 0xFF, 0x7FFF,
         0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x100000000, (1 << 53) + 1, (1 << 62) + 3,
         (1 << 63) - 1, 1 << 63, (1 << 64) - 1, (1 << 64) - 2, (1 << 64) - 31]  # fmt: skip
CASES_PER = 64
WARP_CASES = 48


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
    destination zero-extended (a predicate as 0/1). Predicate sources are made from their 0/1
    operand with ``setp.ne``."""
    dst, srcs = kinds[0], kinds[1:]
    opcode, lut = (op.split(" LUT") + [""])[:2]
    loads = "\n".join(f"  {_CTYPE[k]} s{j} = ({_CTYPE[k]})x[i * 4 + {j}];" for j, k in enumerate(srcs))
    ins = ", ".join(f'"{_CON[k]}"(s{j})' for j, k in enumerate(srcs))
    args = [f"%{j + 1}" for j in range(len(srcs))]
    regs, pre = ["q"], []
    for j, k in enumerate(srcs):
        if k == "p":
            regs.append(f"q{j}")
            pre.append(f"setp.ne.u32 q{j}, %{j + 1}, 0;")
            args[j] = f"q{j}"
    if "mask" in opcode or opcode.startswith(("shfl", "vote")):
        args.append("-1")  # the whole warp takes part
    if lut:
        args.append(lut)
    if dst == "p":
        body = f"{opcode} q, {', '.join(args)}; selp.u32 %0, 1, 0, q;"
    else:
        body = f"{opcode} %0, {', '.join(args)};"
    asm = "{ .reg .pred " + ", ".join(regs) + "; " + " ".join(pre) + " " + body + " }"
    return f"""
extern "C" __global__ void {name}(const unsigned long long *x, unsigned long long *y, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
{loads}
  {_CTYPE[dst]} d = 0;
  asm volatile("{asm}" : "={_CON[dst] if dst != "p" else "r"}"(d) : {ins});
  y[i] = (unsigned long long)d;
}}
"""


def _warp_operands(rng: random.Random, op: str) -> list[list[list[int]]]:
    """``WARP_CASES`` warps, each 32 lanes' operand rows: shuffles get per-lane values, a lane or
    delta uniform or per lane, and a clamp/segment word uniform over the warp."""
    cases = []
    for _ in range(WARP_CASES):
        if op.startswith("shfl"):
            uniform = rng.random() < 0.6
            b0 = rng.choice([0, 1, 2, 5, 16, 31, 32, 33, rng.getrandbits(32)])
            c = rng.choice([31, 0, 0x1F, 0x1C1F, 0x181F, 0x1E00, 0x1F00, 0x1000, 7, rng.getrandbits(13)])
            rows = [[rng.getrandbits(32), b0 if uniform else rng.getrandbits(6), c] for _ in range(32)]
        else:
            bias = rng.choice([0.0, 1.0, 0.5, 0.05, 0.95])
            rows = [[int(rng.random() < bias) * rng.choice([1, 2, 0x80000000])] for _ in range(32)]
        cases.append(rows)
    return cases


def _launch(cp, fn, rows: list[list[int]]) -> list[int]:
    x = cp.asarray([(r + [0] * 4)[:4] for r in rows], dtype=cp.uint64).ravel()
    y = cp.zeros(len(rows), dtype=cp.uint64)
    fn(((len(rows) + 255) // 256,), (256,), (x, y, cp.int32(len(rows))))
    return [int(v) for v in y.get()]


def run(out: str) -> None:
    import cupy as cp

    rng = random.Random(55)
    record = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "cases": []}
    for t, (op, kinds) in enumerate(TEMPLATES + WARP_TEMPLATES):
        warp = (op, kinds) in WARP_TEMPLATES
        groups = _warp_operands(rng, op) if warp else [[r] for r in _operands(rng, len(kinds) - 1)]
        name = f"probe_{t}"
        try:
            fn = cp.RawKernel(kernel_source(name, op, kinds), name)
            got = _launch(cp, fn, [r for g in groups for r in g])
        except Exception as e:  # noqa: BLE001 - a form the device refuses is recorded as such
            record["cases"].append(
                {"op": op, "kinds": list(kinds), "error": f"{type(e).__name__}: {e}"[:300]}
            )
            continue
        for g_i, g in enumerate(groups):
            outs = got[g_i * len(g) : (g_i + 1) * len(g)]
            if warp:
                record["cases"].append({"op": op, "kinds": list(kinds), "warp": g, "out": outs})
            else:
                record["cases"].append({"op": op, "kinds": list(kinds), "in": g[0], "out": outs[0]})
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


def _judge(got, known, case: dict) -> str:
    if got is None or not all(known):
        return "refused"
    mask = (1 << WIDTH[case["kinds"][0]]) - 1
    outs = case["out"] if isinstance(case["out"], list) else [case["out"]]
    return "equal" if all(int(g) & mask == o & mask for g, o in zip(got, outs, strict=True)) else "mismatch"


def _kernel_machine(case: dict) -> str:
    """The CUDA/PTX kernel path's evaluator (:mod:`bankproof.verifier.kernel.values`)."""
    import numpy as np
    from bankproof.verifier.kernel.values import Value, arith, shuffle, vote

    op, kinds = case["op"], case["kinds"]
    opcode, _, lut = op.partition(" LUT")
    rows = case.get("warp") or [case["in"]]
    cols = [[_pattern(r[j], k) for r in rows] for j, k in enumerate(kinds[1:])]
    srcs = [Value(np.array(c, dtype=np.int64), np.ones(len(c), bool)) for c in cols]
    if lut:
        srcs.append(Value.const(int(lut), len(rows)))
    parts = opcode.split(".")
    everyone = np.ones(len(rows), bool)
    if parts[0] == "shfl":
        got = shuffle(parts, *srcs[:3], everyone)
    elif parts[0] == "vote":
        got = vote(parts, srcs[0], everyone)
    else:
        got = arith(opcode, srcs)
    return _judge(None if got is None else got.v, [True] if got is None else got.k, case)


def _triton_machine(case: dict) -> str:
    """The Triton path's evaluator (:func:`bankproof.verifier.ptx.alu.compute`)."""
    import numpy as np
    from bankproof.verifier.ptx.alu import compute

    op, kinds = case["op"], case["kinds"]
    opcode, _, lut = op.partition(" LUT")
    rows = case.get("warp") or [case["in"]]
    srcs = [np.array([_pattern(r[j], k) for r in rows], dtype=np.int64) for j, k in enumerate(kinds[1:])]
    if lut:
        srcs.append(np.full(len(rows), int(lut), dtype=np.int64))
    got = compute(opcode, srcs, [])
    return _judge(got, [True], case)


def replay_case(case: dict) -> str:
    """``equal`` (both of the tool's evaluators give the device's result, or one refuses),
    ``refused`` (neither evaluates it: the result is unknown) or ``mismatch`` (either differs)."""
    got = {_kernel_machine(case), _triton_machine(case)}
    if "mismatch" in got:
        return "mismatch"
    return "equal" if "equal" in got else "refused"


def measured_forms(record: dict) -> list[str]:
    """The forms every recorded case of which is ``equal`` or ``refused`` (none mismatches, the
    device compiled it): the forms the evaluators may compute; any other is left unknown."""
    ok: dict[str, bool] = {}
    for c in record["cases"]:
        op = c["op"].partition(" LUT")[0]
        good = "error" not in c and replay_case(c) != "mismatch"
        ok[op] = ok.get(op, True) and good
    return sorted(op for op, good in ok.items() if good)


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
        print(f"{op}: {c.get('in') or c['warp'][:2]} -> device {c['out']}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["run"]:
        run(sys.argv[2])
    elif sys.argv[1:2] == ["replay"]:
        replay(sys.argv[2])
    elif sys.argv[1:2] == ["forms"]:  # the measured forms list the machines gate on
        import gzip

        with open(sys.argv[2], "rb") as fh:
            rec = json.loads(gzip.decompress(fh.read()))
        print(json.dumps({"record": sys.argv[2].rsplit("/", 1)[-1], "forms": measured_forms(rec)}, indent=0))
    elif sys.argv[1:2] == ["source"]:
        for t, (op, kinds) in enumerate(TEMPLATES):
            print(kernel_source(f"probe_{t}", op, kinds))
