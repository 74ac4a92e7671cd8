"""Address patterns for single-instruction measurements, by family.

Each pattern: ``{"instr": short name, "family": str, "byte_offsets": [32 ints], "mask": int}``.
Families cover random addresses, strides, F2-linear lane maps with zero columns (broadcast),
addresses repeated in groups, partial active masks, one address for all lanes, and adversarial
cases aimed at the unsettled rules (how 64/128-bit accesses with repeated addresses are grouped).

>>> ps = plan(seed=1, per_kind=20)
>>> len(ps) >= 20 * 24, all(len(p["byte_offsets"]) == 32 for p in ps)
(True, True)
"""

from __future__ import annotations

import random

from bankproof.gpu_checks.kernels import SMEM_BYTES
from bankproof.models.hardware import LANES, Instr, all_instructions

FULL = (1 << LANES) - 1


def _aligned(rng: random.Random, lo: int, hi: int, align: int) -> int:
    return rng.randrange(lo // align, max(lo // align + 1, hi // align)) * align


def _linear(rng: random.Random, nbits: int, align: int, window: int, zero_p: float) -> list[int]:
    imgs = [0 if rng.random() < zero_p else _aligned(rng, 0, window, align) for _ in range(nbits)]
    out = []
    for lane in range(LANES):
        x = 0
        for i in range(nbits):
            if (lane >> i) & 1:
                x ^= imgs[i]
        out.append(x)
    return out


def _lane_patterns(ins: Instr, rng: random.Random, n: int) -> list[tuple[str, list[int], int]]:
    """Patterns for ld/st (every lane supplies an address of ``ins.width`` bytes)."""
    w = ins.width
    lim = SMEM_BYTES - 16
    out: list[tuple[str, list[int], int]] = []

    def add(family: str, offs: list[int], mask: int = FULL) -> None:
        offs = [o % lim // w * w for o in offs]
        out.append((family, offs, mask))

    b0 = _aligned(rng, 0, 8192, 128)  # one base per pattern family run
    # Deterministic landmarks first.
    add("contiguous", [b0 + i * w for i in range(LANES)])
    add("all_same", [b0] * LANES)
    add("same_bank_distinct_words", [i * 128 for i in range(LANES)])
    add("same_bank_pairs", [(i // 2) * 128 for i in range(LANES)])
    for stride in (2, 4, 8, 16, 32, 64, 128, 256, 132, 136, 144):
        if stride % w == 0:
            add(f"stride{stride}", [b0 + i * stride for i in range(LANES)])
    for g in (2, 4, 8, 16):
        add(f"group{g}_consecutive", [b0 + (i // g) * w for i in range(LANES)])
        add(f"group{g}_strided", [b0 + (i % (LANES // g)) * w for i in range(LANES)])
        add(f"group{g}_rows", [(i // g) * 128 for i in range(LANES)])
        add(f"group{g}_rowmod", [(i % (LANES // g)) * 128 for i in range(LANES)])
    # Phase probes: lanes i and i + k share an address / a bank.
    for k in (1, 2, 4, 8, 16):
        add(f"mirror{k}", [b0 + (i & ~k) * w for i in range(LANES)])
        add(f"mirror{k}_rows", [((i & ~k) % 8) * 128 + (i & ~k) // 8 * w for i in range(LANES)])
    for k in (8, 16):
        add(f"halves_same_bank_{k}", [(i % k) * w + (i // k) * 128 for i in range(LANES)])
    add("chunk128_rot", [((i % 8) * 16 + (i // 8) * 4) % 128 // w * w for i in range(LANES)])
    add("chunk128_rev", [(127 - i * 4) // w * w for i in range(LANES)])
    # Sub-word sharing: k lanes per 4-byte word, at distinct or repeated bytes, words in one
    # row or in one bank.
    if w < 4:
        per_word = 4 // w
        for k in (2, 4):
            for spread in ("row", "bank"):
                step = 4 if spread == "row" else 128
                distinct = [(i // k) * step + (i % k % per_word) * w for i in range(LANES)]
                repeated = [(i // k) * step for i in range(LANES)]
                add(f"subword{k}_distinct_{spread}", distinct)
                add(f"subword{k}_repeated_{spread}", repeated)
        add("subword_one_word_all_lanes", [(i % per_word) * w for i in range(LANES)])
        add("subword_two_words_same_bank", [(i % 2) * 128 + (i // 2 % per_word) * w for i in range(LANES)])
    # Pairing probes for wide loads: lanes l and l ^ x share an address (rows of one bank, so
    # every distinct address conflicts and merging shows in the count), mixed pairings per quad,
    # and quarter-to-quarter conflicts that tell which phases merge.
    rows_of = [rng.sample(range(64), 32) for _ in range(4)]
    for x in (1, 2, 3, 4, 8, 16):
        add(f"pairs_xor{x}_rows", [rows_of[0][min(i, i ^ x)] * 128 for i in range(LANES)])
        add(f"pairs_xor{x}_random", [_aligned(rng, 0, 2048, w) for _ in range(LANES)])
        out[-1] = (out[-1][0], [out[-1][1][min(i, i ^ x)] for i in range(LANES)], FULL)
    add("pairs_mixed_quads", [rows_of[1][min(i, i ^ (1 if i // 4 % 2 else 2))] * 128 for i in range(LANES)])
    add("pairs_mixed_halves", [rows_of[1][min(i, i ^ (1 if i < 16 else 2))] * 128 for i in range(LANES)])
    for a, b in ((0, 1), (0, 2), (0, 3), (1, 2)):
        # quarters a and b collide (same bank, other words); the others spread over banks
        offs = []
        for i in range(LANES):
            j = min(i, i ^ 1)
            q = j // 8
            offs.append((j % 8) * 16 + (1 + q) * 2048 if q in (a, b) else (j % 8) * 16 + 64 + q * 128)
        add(f"pairs_quarters{a}{b}_collide", offs)
    for mask in (0x55555555, 0x33333333, 0x0000FFFF, 0x00FF00FF, 0x11111111):
        add(f"pairs_xor1_mask{mask:08x}", [rows_of[2][min(i, i ^ 1)] * 128 for i in range(LANES)], mask)
        add(f"distinct_rows_mask{mask:08x}", [rows_of[3][i] * 128 for i in range(LANES)], mask)
    # Masks.
    masks = (
        0x0000FFFF,
        0xFFFF0000,
        0x000000FF,
        0x55555555,
        0x0F0F0F0F,
        0x80000001,
        1,
        0x00FF00FF,
        0xF000000F,
    )
    for mask in masks:
        add(f"mask{mask:08x}_contig", [b0 + i * w for i in range(LANES)], mask)
        add(f"mask{mask:08x}_rows", [i * 128 for i in range(LANES)], mask)
    while len(out) < n:
        r = rng.random()
        if r < 0.2:
            x = rng.choice([1, 2, 3, 4, 8, 16])
            window = rng.choice([256, 1024, 4096])
            addrs = [_aligned(rng, 0, window, w) for _ in range(LANES)]
            mask = FULL if rng.random() < 0.7 else rng.getrandbits(32) or 1
            add(f"random_pairs_xor{x}", [addrs[min(i, i ^ x)] for i in range(LANES)], mask)
        elif r < 0.35:
            window = rng.choice([128, 256, 512, 1024, 4096, lim])
            add(
                f"random{window}",
                [_aligned(rng, 0, window, w) for _ in range(LANES)],
                FULL if rng.random() < 0.7 else rng.getrandbits(32) or 1,
            )
        elif r < 0.6:
            window = rng.choice([256, 1024, 4096])
            add(
                f"linear{window}",
                _linear(rng, 5, w, window, rng.choice([0.0, 0.2, 0.4])),
                FULL if rng.random() < 0.8 else rng.getrandbits(32) or 1,
            )
        elif r < 0.8:
            g = rng.choice([2, 4, 8, 16])
            addrs = [_aligned(rng, 0, rng.choice([256, 1024]), w) for _ in range(LANES // g)]
            perm = list(range(LANES))
            rng.shuffle(perm)
            add(f"group{g}_random", [addrs[perm[i] % (LANES // g)] for i in range(LANES)])
        else:
            # Few distinct addresses spread over one 128-byte segment plus conflicting rows.
            k = rng.choice([2, 4, 8])
            addrs = [_aligned(rng, 0, 128, w) + rng.randrange(k) * 128 for _ in range(LANES)]
            add(f"few_rows{k}", addrs, FULL if rng.random() < 0.8 else rng.getrandbits(32) or 1)
    return out[: max(n, len(out))]


def _matrix_patterns(ins: Instr, rng: random.Random, n: int) -> list[tuple[str, list[int], int]]:
    """Patterns for ldmatrix/stmatrix: 16-byte-aligned row addresses from lanes 0..8m-1."""
    rows = 8 * ins.matrices
    out: list[tuple[str, list[int], int]] = []

    def add(family: str, offs: list[int]) -> None:
        offs = [(o % (SMEM_BYTES - 16)) // 16 * 16 for o in offs[:rows]]
        offs += [offs[i % rows] for i in range(rows, LANES)]  # lanes past the rows: ignored
        out.append((family, offs, FULL))

    for stride in (16, 32, 64, 128, 144, 256, 272, 512):
        add(f"row_stride{stride}", [i * stride for i in range(rows)])
    add("all_same", [256] * rows)
    add("swizzle128", [i * 128 + ((i % 8) ^ (i // 8 % 8)) * 16 for i in range(rows)])
    add("swizzle64", [i * 64 + ((i % 4) ^ (i // 2 % 4)) * 16 for i in range(rows)])
    for g in (2, 4, 8):
        add(f"group{g}", [(i // g) * 128 for i in range(rows)])
        add(f"group{g}_contig", [(i // g) * 16 for i in range(rows)])
    add("matrices_same_rows", [(i % 8) * 128 for i in range(rows)])
    add("matrices_same_bank", [(i % 8) * 16 + (i // 8) * 128 for i in range(rows)])
    while len(out) < n:
        r = rng.random()
        if r < 0.4:
            window = rng.choice([128, 256, 512, 2048, 16384])
            add(f"random{window}", [_aligned(rng, 0, window, 16) for _ in range(rows)])
        elif r < 0.8:
            add("linear", _linear(rng, 5, 16, rng.choice([512, 2048]), rng.choice([0.0, 0.2])))
        else:
            g = rng.choice([2, 4])
            addrs = [_aligned(rng, 0, 1024, 16) for _ in range(rows // g)]
            add(f"group{g}_random", [addrs[i % len(addrs)] for i in range(rows)])
    return out


def plan(seed: int = 2026, per_kind: int = 70, arch: int = 90) -> list[dict]:
    """Every pattern of every instruction kind, in launch order (deterministic for a seed)."""
    rng = random.Random(seed)
    out = []
    for ins in all_instructions():
        if ins.min_arch > arch:
            continue
        gen = _matrix_patterns if ins.is_matrix else _lane_patterns
        for family, offs, mask in gen(ins, rng, per_kind):
            out.append(
                {"id": len(out), "instr": ins.short, "family": family, "byte_offsets": offs, "mask": mask}
            )
    return out
