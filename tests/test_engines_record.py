"""The engines' bytes and counts, replayed from the H100 and H200 records (lab/gpu/engines_probe.cu,
gpu_checks/results/*-engines.json.gz): every byte a TMA box put, every shared slot a wgmma read
through a descriptor, every element a TMA tile gave wgmma and ldmatrix, every op_gmma count and every
TMA global-sector count equals the model's prediction; the refusals (box wider than the span, a
destination off 128 bytes) happened where the model refuses."""

from __future__ import annotations

import gzip
import json
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from bankproof.models.engines.costs import gmma_wavefronts, tma_global_sectors
from bankproof.models.engines.descriptors import SM90_SWIZZLE, Descriptor, read_addresses
from bankproof.models.engines.placement import TMA_ALIGN, DescriptorRead, TmaBox
from bankproof.models.engines.tma import MODES
from bankproof.models.errors import InputError

RESULTS = Path(__file__).parent.parent / "gpu_checks" / "results"
RECORDS = ["h100-2026-11-27-engines.json.gz", "h200-2026-11-27-engines.json.gz"]
STORES = "h100-2026-11-27-engines-store.json.gz"  # a later H100 run: the mixed probes again, TMA stores
RANDOM = "h100-2026-11-27-engines-random.json.gz"  # arbitrary LBO/SBO/start/base offset, with ncu
TMA_MODE = {0: "none", 1: "32B", 2: "64B", 3: "128B"}
EB = {"f16": 2, "tf32": 4, "s8": 1}
G = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum"
C = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum"
P = "l1tex__data_pipe_lsu_wavefronts_mem_shared"


@cache
def record(name: str) -> dict:
    with gzip.open(RESULTS / name) as f:
        return json.loads(f.read())


@pytest.mark.slow
@pytest.mark.parametrize("name", RECORDS)
def test_tma_bytes(name):
    """Each box byte landed at the mode's XOR of window + base + row * pitch + byte, on the absolute
    address; a box wider than the span was refused by the driver, a destination off 128 bytes
    faulted; a 16-byte-aligned global tensor works with every swizzle."""
    runs = record(name)["tma"]
    placed = refused = faulted = 0
    for x in runs:
        mode = MODES[TMA_MODE[x["mode"]]]
        if x["encode"]:
            with pytest.raises(InputError, match="swizzle span"):
                TmaBox(mode, 16, x["boxb"] // x["eb"], 8 * x["eb"])
            refused += 1
            continue
        if "launch" in x:
            assert x["launch"] == "misaligned address" and x["base"] % TMA_ALIGN
            faulted += 1
            continue
        assert x["base"] % TMA_ALIGN == 0 and x["landed"] == 1
        box = TmaBox(mode, 16, x["boxb"] // x["eb"], 8 * x["eb"])
        got = np.array(x["written"])
        g = got[:, 1]
        row, byte = g // 256, g % 256
        want = box.address(row, byte // x["eb"], x["window"] + x["base"]) + byte % x["eb"] - x["window"]
        assert len(got) == 16 * x["boxb"] and (got[:, 0] == want).all(), x
        placed += 1
    assert (placed, refused, faulted) == (74, 2, 4)
    assert {x["goff"] for x in runs if "written" in x} == {0, 16, 32, 64, 128}


@pytest.mark.parametrize(
    ("name", "section"), [(RECORDS[0], "gmma"), (RECORDS[0], "boff"), (RECORDS[1], "gmma")]
)
def test_descriptor_reads(name, section):
    """Every (row, k) of every probe read the slot the descriptor model names: canonical layouts
    at the descriptor's LBO/SBO, the swizzle on the absolute address with its phase lowered by the
    base-offset field (starts on and off the period; fields equal to the start's phase and not)."""
    runs = record(name)[section]
    for x in runs:
        eb = EB[x["dtype"]]
        got = np.array(x["slots"]) * eb
        d = Descriptor("sm90", x["window"] + x["start"], x["lbo"], x["sbo"], x["base_offset"],
                       MODES[SM90_SWIZZLE[x["swizzle"]]])  # fmt: skip
        want = read_addresses(d, x["major"], 8 * eb, got.shape[0]) - x["window"]
        assert (got == want).all(), {k: v for k, v in x.items() if k != "slots"}
    assert len(runs) == {"gmma": 245, "boff": 93, "random": 72}[section]
    assert {x["base_offset"] for x in runs if x["base_offset"]} and {x["major"] for x in runs} == {"K", "MN"}


def _tma_inverse(mode: int, rows: int, window: int, base: int) -> dict[int, int]:
    """Shared address -> global element id (16-bit, 128 per global row) of a TMA box."""
    span = 16 << mode
    box = TmaBox(MODES[TMA_MODE[mode]], rows, span // 2, 16)
    r, c = np.meshgrid(np.arange(rows), np.arange(span // 2), indexing="ij")
    return dict(
        zip(box.address(r, c, window + base).ravel().tolist(), (r * 128 + c).ravel().tolist(), strict=True)
    )


@pytest.mark.parametrize("name", [*RECORDS, STORES])
def test_tma_tile_read_by_wgmma_and_ldmatrix(name):
    """A TMA tile read by wgmma (descriptor per mode, any K step, base offset 0 or the start's
    phase) and by ldmatrix (XOR from the absolute or the buffer-relative address): each element is
    the one the composition of the two models names (0 where the reader reads outside the box)."""
    intended = {True: 0, False: 0}
    for x in (x for x in record(name)["mixed"] if x["probe"] != "tmastore"):
        span, base, w0 = 16 << x["mode"], x["base"], x["window"]
        got = np.array(x["elements"])
        if x["probe"] == "tmagmma":
            inv = _tma_inverse(x["mode"], 32, w0, base)
            k_major = x["major"] == "K"
            lbo = 16 if k_major else 16 * span
            start = base + (32 if k_major else 16 * span) * x["kstep"]
            d = Descriptor("sm90", start, lbo, 8 * span, x["base_offset"], MODES[TMA_MODE[x["mode"]]])
            read = DescriptorRead(d, x["major"], 16, 32)
            mn, k = np.meshgrid(np.arange(32), np.arange(16), indexing="ij")
            addr = read.address(mn, k, w0) if k_major else read.address(k, mn, w0)
        else:
            from bankproof.models.engines.placement import LayoutPlacement

            inv = _tma_inverse(x["mode"], 16, w0, base)
            row, col = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
            xor = "relative" if x["xor"] == "rel" else "absolute"
            soft = LayoutPlacement(row * span // 2 + col, 16, MODES[TMA_MODE[x["mode"]]].sw, xor)
            addr = soft.address(row, col, w0 + base)
        want = np.array([inv.get(int(a), 0) for a in np.ravel(addr)]).reshape(np.shape(addr))
        assert (got == want).all(), {k: v for k, v in x.items() if k != "elements"}
        if x["probe"] == "tmagmma" and x["mode"] == 3 and x["major"] == "K" and x["base"]:
            # the tile as meant: element (n, 16 * kstep + k) of the global tensor (128 per row)
            meant = np.arange(32)[:, None] * 128 + 16 * x["kstep"] + np.arange(16)[None, :]
            hits = int((got == meant).sum())
            assert hits == (512 if x["base_offset"] == 0 else 0), x["base_offset"]
            intended[x["base_offset"] == 0] += 1
    assert intended == {True: 8, False: 8}  # bases 128 and 256, 4 K steps: field 0 right, the phase wrong


@pytest.mark.parametrize("name", [*RECORDS, RANDOM])
def test_op_gmma_counts(name):
    """op_gmma = operand bytes / 128 (A 64 rows, the selector B 32 rows), no conflicts, in every
    launch of every probe (3 launches each)."""
    rec = record(name)
    for section in [s for s in ("gmma", "boff", "random") if rec.get(s)]:  # the runs had different sections
        counts = rec[f"ncu_{section}"]
        assert len(counts) == 3 * len(rec[section])
        for i, x in enumerate(rec[section]):
            want = gmma_wavefronts(32, 8 * EB[x["dtype"]]) + (
                gmma_wavefronts(64, 8 * EB[x["dtype"]]) if x["operand"] == "A" else 0
            )
            assert {(c[G], c[C]) for c in counts[3 * i : 3 * i + 3]} == {(want, 0)}, x["operand"]


def test_tma_counts_h100():
    """A TMA load adds nothing to the LSU shared-memory wavefronts (total minus op_ld/op_st is 16 for
    every box from 512 to 2048 bytes); its global sectors are the sectors each row touches."""
    rec = record(RECORDS[0])
    plan = [line.split() for line in rec["tma_ncu_plan"].splitlines()]
    counts = rec["ncu_tma"]
    assert len(counts) == 3 * len(plan)
    for i, (*_, boxb, goff) in enumerate(plan):
        c = counts[3 * i]
        assert c[P + ".sum"] - c[P + "_op_ld.sum"] - c[P + "_op_st.sum"] == 16
        sectors = tma_global_sectors(16, int(boxb), int(goff), 256)
        assert c["l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum"] == sectors
        assert c["l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum"] == 32 * sectors
        assert c["smsp__sass_inst_executed_op_tma_ld.sum"] == 1
    assert {p[5] for p in plan} == {"0", "16", "32", "64", "128"}


def test_tma_store_reads_the_same_placement():
    """A TMA store (shared -> global) reads box byte (row, b) from the same address a TMA load
    writes it to: the mode's XOR of base + row * pitch + b on the absolute address, every mode,
    8/16/32-bit, bases on and off the period, narrow boxes. (The probe marks a global byte as
    stored when it differs from a 0xAB fill, so the bytes whose source offset ends in 0xAB are not
    listed; that is checked too.)"""
    stores = [x for x in record(STORES)["mixed"] if x["probe"] == "tmastore"]
    assert len(stores) == 38
    for x in stores:
        eb = x["eb"]
        box = TmaBox(MODES[TMA_MODE[x["mode"]]], 16, x["boxb"] // eb, 8 * eb)
        rows, b = np.meshgrid(np.arange(16), np.arange(x["boxb"]), indexing="ij")
        src = box.address(rows, b // eb, x["window"] + x["base"]) + b % eb - x["window"]
        model = {
            int(r * 256 + c): int(s) for r, c, s in zip(rows.ravel(), b.ravel(), src.ravel(), strict=True)
        }
        assert {g: s for g, s in x["read"]} == {g: s for g, s in model.items() if s & 0xFF != 0xAB}, x["mode"]
