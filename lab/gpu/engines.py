"""The Hopper engines' bytes, measured (``lab/gpu/engines_probe.cu``, run by
``lab/gpu/device_engines.sh``): where a TMA load puts each byte of its box for every swizzle mode,
element width, shared base and global alignment; which shared slot a wgmma reads for each (row, k) of
an operand through a descriptor (every layout type, 8/16/32-bit, K/MN-major, A and B, starts on and
off the swizzle period, with and without the base-offset field); a TMA tile read back by wgmma and by
ldmatrix with an XOR from the absolute or the buffer-relative address; and what Nsight Compute counts
for them (op_gmma wavefronts and conflicts).

    python -m lab.gpu.engines plan tma|gmma|mixed|boff     # probe lines for engines_probe (stdin)
    python -m lab.gpu.engines metrics [tma]            # the ncu metric list
    python -m lab.gpu.engines pack OUTDIR RECORD.json  # probes' JSON lines + ncu CSVs -> one record

>>> len(plan("tma")) > 40, plan("gmma")[0]
(True, 'gmma f16 A K 0 0 0 128 256')
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bankproof.gpu_checks.measure import counters, parse_ncu_csv

SPAN = {0: 16, 1: 32, 2: 64, 3: 128}  # TMA mode -> swizzle span (bytes)
SM90_CODE = {0: 0, 1: 3, 2: 2, 3: 1}  # TMA mode -> wgmma layout type
METRICS = [f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum" for op in ("gmma", "ld", "st")] + [
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "smsp__inst_executed.sum",
]
TMA_METRICS = [  # what ncu counts of a TMA load (no shared-memory wavefront metric names TMA)
    "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum",
    "l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum",
    "smsp__sass_inst_executed_op_tma_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
]


def _tma() -> list[str]:
    out = []
    for eb in (1, 2, 4):
        for mode in range(4):
            boxb = SPAN[mode] if mode else 64
            out += [f"tma {eb} {mode} {base} {boxb} 0" for base in (0, 128, 256, 384, 512)]
    out += [f"tma 2 3 0 {b} 0" for b in (32, 64)] + ["tma 2 2 0 32 0", "tma 2 2 128 32 0", "tma 2 3 256 64 0"]
    out += ["tma 2 3 0 256 0", "tma 2 1 0 64 0", "tma 2 0 0 256 0"]  # inner box over the span
    out += [f"tma 2 {m} 0 {SPAN[m]} {g}" for m in (1, 3) for g in (16, 32, 64, 128)]  # global alignment
    out += [f"tma 2 {m} {b} {SPAN[m] if m else 64} 0" for m in (0, 3) for b in (16, 64)]  # shared alignment
    return out


def _gmma() -> list[str]:
    out = []
    for dt, eb in (("f16", 2), ("tf32", 4), ("s8", 1)):
        for opnd in ("A", "B"):
            rows = 64 if opnd == "A" else 32
            for major in ("K", "MN") if dt == "f16" else ("K",):
                for mode in range(4):
                    span, code = SPAN[mode], SM90_CODE[mode]
                    if major == "K":
                        lbo, sbo = (128, 256) if mode == 0 else (16, 8 * span)
                    else:  # K rows of `span` bytes; LBO jumps between span-wide MN panels of 16 K rows
                        lbo, sbo = (128 * (rows * eb // 16), 128) if mode == 0 else (16 * span, 8 * span)
                    starts = [(0, 0), (128, 0), (128, 1), (384, 0), (384, 3), (512, 0), (512, 4)]
                    if major == "K" and mode:
                        starts.insert(1, (32, 0))
                    out += [f"gmma {dt} {opnd} {major} {code} {s} {b} {lbo} {sbo}" for s, b in starts]
    out += ["gmma f16 B K 1 0 0 16 2048", "gmma f16 B K 0 0 0 512 128", "gmma f16 B MN 0 0 0 128 512"]
    return out


def _boff() -> list[str]:
    """Base-offset fields other than the start's own phase: the field's value, not the start, sets
    the shift."""
    out = []
    for dt, opnd, major in (("f16", "B", "K"), ("f16", "B", "MN"), ("s8", "B", "K"), ("tf32", "A", "K")):
        for mode in (1, 2, 3):
            span, code = SPAN[mode], SM90_CODE[mode]
            lbo, sbo = (16, 8 * span) if major == "K" else (16 * span, 8 * span)
            pairs = [(0, 1), (0, 2), (0, 5), (128, 2), (128, 3), (256, 1), (640, 7)] + [(32, 1)] * (
                major == "K"
            )
            out += [f"gmma {dt} {opnd} {major} {code} {s} {b} {lbo} {sbo}" for s, b in pairs]
    return out


def _mixed() -> list[str]:
    out = []
    for mode in range(4):
        for base in (0, 128, 256):
            for boff in sorted({0, (base >> 7) & 7}):
                out += [f"tmagmma {mode} {base} {boff} {k} K" for k in range(max(1, SPAN[mode] // 32))]
                out += [f"tmagmma {mode} {base} {boff} 0 MN"]
    out += [
        f"ldsm {mode} {base} {x}" for mode in (1, 2, 3) for base in (0, 128, 256, 512) for x in ("abs", "rel")
    ]
    out += [f"tmastore {eb} {mode} {base} {SPAN[mode] if mode else 64}" for eb in (1, 2, 4) for mode in range(4)
            for base in (0, 128, 384)]  # fmt: skip
    out += ["tmastore 2 3 0 64", "tmastore 2 2 128 32"]  # boxes narrower than the span
    return out


def _random() -> list[str]:
    """Descriptors with arbitrary LBO/SBO (multiples of 16, most not of 128), starts and base-offset
    fields: the read layout and the op_gmma cost away from the canonical values."""
    import random

    rng = random.Random(20261127)
    out = []
    for _ in range(72):
        dt = rng.choice(["f16", "f16", "tf32", "s8"])
        opnd = rng.choice(["A", "B"])
        major = rng.choice(["K", "MN"]) if dt == "f16" else "K"
        code = rng.choice([0, 1, 2, 3])
        lbo, sbo = 16 * rng.randrange(1, 129), 16 * rng.randrange(1, 129)
        start = 16 * rng.randrange(0, 64)
        boff = rng.choice([0, 0, rng.randrange(1, 8)])
        out.append(f"gmma {dt} {opnd} {major} {code} {start} {boff} {lbo} {sbo}")
    return out


def plan(section: str) -> list[str]:
    """The probe lines of one section (``tma``: one process each, since a refused copy can fault the
    context; ``gmma`` and ``mixed``: one process for all)."""
    return {"tma": _tma, "gmma": _gmma, "mixed": _mixed, "boff": _boff, "random": _random}[section]()


def _lines(path: Path) -> list[dict]:
    out = []
    for ln in path.read_text().splitlines() if path.exists() else []:
        if ln.startswith("{"):
            try:
                out.append(json.loads(ln))
            except json.JSONDecodeError:
                out.append({"error": "unparsable probe output", "line": ln[:200]})
    return out


def pack(outdir: str, record: str) -> None:
    """One record: every probe's output, the ncu counters of the gmma launches (3 per probe, the
    same counts each) and of the aligned TMA launches, the environment and the SASS lines."""
    d = Path(outdir)
    rec: dict = {"kind": "engines", "env": (d / "env.txt").read_text() if (d / "env.txt").exists() else ""}
    for section in ("tma", "gmma", "mixed", "boff", "random"):
        rec[section] = _lines(d / f"{section}.jsonl")
    for name, metrics in (
        ("gmma", METRICS),
        ("tma", METRICS + TMA_METRICS),
        ("boff", METRICS),
        ("random", METRICS),
    ):
        csv = d / f"ncu_{name}.csv"
        if csv.exists():
            rows = [r for r in parse_ncu_csv(csv.read_text()) if r.get("Kernel Name", "").startswith("k_")]
            rec[f"ncu_{name}"] = [
                {"kernel": r["Kernel Name"].split("(")[0], **counters(r, metrics)} for r in rows
            ]
    for extra in ("sass.txt", "env.txt", "tma_ncu_plan.txt"):
        if (d / extra).exists():
            rec[extra.split(".")[0]] = (d / extra).read_text()
    Path(record).write_text(json.dumps(rec, separators=(",", ":")) + "\n")
    print(f"{sum(len(rec[s]) for s in ('tma', 'gmma', 'mixed', 'boff', 'random'))} probes -> {record}")


def main(argv: list[str]) -> None:
    if argv[:1] == ["plan"] and len(argv) == 2:
        print("\n".join(plan(argv[1])))
    elif argv[:1] == ["metrics"]:
        print(",".join(METRICS + (TMA_METRICS if argv[1:] == ["tma"] else [])))
    elif argv[:1] == ["pack"] and len(argv) == 3:
        pack(argv[1], argv[2])
    else:
        sys.exit("usage: python -m lab.gpu.engines plan tma|gmma|mixed|boff | metrics | pack OUTDIR RECORD")


if __name__ == "__main__":
    main(sys.argv[1:])
