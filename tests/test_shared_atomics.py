"""Shared atomics counted where their rule was measured (issue 55, item 4): a 32-bit
``atom.shared.add.u32``/``exch.b32``/``max.u32`` (and ``red.shared.add.u32``, whose SASS is the same
ATOMS.ADD) costs the most active lanes on one bank (models/atomic_rule.py, measured on an H100:
gpu_checks/results/h100-2026-12-07-cp-async-cross.json.gz). The kernel command counts them from the
SASS, refutes a serialized one with two lanes and a reproducer, and leaves every other form, every
SASS it does not recognise, and a reduction without the SASS, unknown."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from bankproof.models.errors import InputError
from bankproof.verifier.kernel import sass

import bankproof

RECORD = Path(__file__).resolve().parent.parent / "gpu_checks/results/h100-2026-12-07-cp-async-cross.json.gz"
WF = "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"
BODY = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{{
 .reg .b32 %r<12>;
 .reg .b64 %rd<3>;
 .shared .align 4 .b8 buf[4096];
 mov.u32 %r1, %tid.x;
 {index}
 shl.b32 %r2, %r6, 2;
 mov.u32 %r3, buf;
 add.s32 %r4, %r3, %r2;
 {atomic}
}}
"""
needs_sass = pytest.mark.skipif(sass.tools() is None, reason="needs ptxas and nvdisasm (the cuda extra)")


def _kernel(atomic: str, index: str = "and.b32 %r6, %r1, 7;", block: int = 64):
    return bankproof.kernel(BODY.format(atomic=atomic, index=index), block=block, language="ptx")


def test_the_wavefronts_command_replays_every_recorded_atomic():
    record = json.loads(gzip.decompress(RECORD.read_bytes()))
    atoms = [m for m in record["measurements"] if m["kind"] == "atomic"]
    assert len(atoms) == 21
    for m in atoms:
        active = [(m["mask"] >> lane) & 1 == 1 for lane in range(32)]
        form = {"atom_add": "atom.add.u32", "atom_exch": "atom.exch.b32", "atom_max": "atom.max.u32"}
        r = bankproof.wavefronts(form[m["probe"]], m["byte_offsets"], active=active)
        assert (r.wavefronts, r.rests_on) == (m["metrics"][WF], "measured"), m["pattern"]
        assert sorted(lane for g in r.groups for lane in g) == [i for i in range(32) if active[i]]


def test_an_atomic_the_hardware_faults_on_or_another_arch_is_refused():
    with pytest.raises(InputError, match="byte_offsets must be 4-byte aligned"):
        bankproof.wavefronts("atom.add.u32", [2] + [0] * 31)
    with pytest.raises(InputError, match="instr is a shared atomic of the phase-model archs"):
        bankproof.wavefronts("atom.add.u32", [0] * 64, arch="gfx942")
    assert bankproof.wavefronts("atom.add.u32", [0] * 32, arch="sm80").rests_on == "assumed"


@needs_sass
def test_a_measured_atomic_is_counted_from_the_sass_and_refuted_where_lanes_share_a_bank():
    r = _kernel("atom.shared.add.u32 %r8, [%r4], %r1;")  # 8 words: 4 lanes on each of 8 banks
    (line,) = r.instructions
    assert (line.instructions, line.wavefronts, line.ideal, line.verdict) == (2, 8, 2, "refuted")
    assert r.verdict == "refuted" and r.exit_code == 1
    c = line.conflict
    assert c.lanes == (0, 8) and c.byte_addresses == (0, 0) and c.bank == 0 and c.wavefronts == 4
    got = subprocess.run(
        [str(Path(sys.executable).parent / "bankproof"), "wavefronts", "--input", "-"],
        input=c.reproduce.split("'")[1],
        capture_output=True,
        text=True,
    )
    assert json.loads(got.stdout)["wavefronts"] == 4
    (total,) = [t for t in r.totals if t.kind == "atomic"]
    assert (total.instructions, total.wavefronts) == (2, 8)


@needs_sass
@pytest.mark.parametrize(
    ("atomic", "wavefronts"),
    [
        ("atom.shared.exch.b32 %r8, [%r4], %r1;", 1),  # every lane its own bank
        ("atom.shared.max.u32 %r8, [%r4], %r1;", 1),
        ("red.shared.add.u32 [%r4], %r1;", 1),  # ATOMS.ADD in the SASS, as measured
    ],
)
def test_every_measured_form_is_counted(atomic, wavefronts):
    r = _kernel(atomic, index="mov.u32 %r6, %r1;", block=32)
    (line,) = r.instructions
    assert (line.wavefronts, line.verdict, line.rests_on) == (wavefronts, "proved", "measured")
    assert r.verdict == "proved"


@pytest.mark.parametrize(
    "atomic",
    [
        "atom.shared.add.s32 %r8, [%r4], %r1;",  # ATOMS.ADD.S32: not measured
        "atom.shared.min.u32 %r8, [%r4], %r1;",
        "atom.shared.cas.b32 %r8, [%r4], %r1, %r6;",
        "atom.shared.add.u64 %rd1, [%r4], 1;",
        "atom.shared.add.f32 %r8, [%r4], 0f3F800000;",  # a CAS loop on sm90
    ],
)
def test_every_other_form_leaves_the_kernel_unknown(atomic):
    r = _kernel(atomic, index="mov.u32 %r6, %r1;")
    assert r.verdict == "unknown" and r.exit_code == 3
    (line,) = r.instructions
    assert line.wavefronts is None and line.reason


def test_without_the_sass_no_atomic_is_counted(monkeypatch):
    """Even the probe's own PTX: ptxas may run it otherwise (the next test)."""
    monkeypatch.setattr(sass, "disassemble_cached", lambda *a: None)
    for atomic in ("atom.shared.add.u32 %r8, [%r4], %r1;", "red.shared.add.u32 [%r4], %r1;"):
        r = _kernel(atomic)
        assert r.verdict == "unknown" and r.instructions[0].wavefronts is None
        assert "only where the SASS shows the measured ATOMS form" in r.instructions[0].reason


INC_RECORD = Path(__file__).resolve().parent.parent / "gpu_checks/results/h100-2026-12-07-atom-inc.json.gz"


def test_the_increment_rule_replays_its_probe():
    """``atom.shared.add.u32 _, [a], 1`` with its result unused runs as ATOMS.POPC.INC.32 (the
    probe's SASS checked on the device): 14 patterns, one instruction each, wavefronts the most
    distinct words on one bank (lanes on one word are one increment)."""
    from bankproof.models.atomic_rule import increment_wavefronts

    record = json.loads(gzip.decompress(INC_RECORD.read_bytes()))
    assert len(record["measurements"]) == 14
    for m in record["measurements"]:
        active = [(m["mask"] >> lane) & 1 == 1 for lane in range(32)]
        got = increment_wavefronts(m["byte_offsets"], active)
        assert got == m["metrics"][WF] and m["metrics"]["smsp__sass_inst_executed_op_shared_atom.sum"] == 1, m
    # the ATOMS.ADD rule (lanes a bank) differs on these: the forms are not one rule
    same_word = next(m for m in record["measurements"] if m["pattern"] == "same address")
    assert same_word["metrics"][WF] == 1


@needs_sass
def test_an_increment_ptxas_aggregates_over_the_warp_is_counted_by_its_rule():
    r = _kernel("atom.shared.add.u32 %r8, [%r4], 1;", index="mov.u32 %r6, 0;", block=32)
    (line,) = r.instructions
    assert (line.instructions, line.wavefronts, line.verdict) == (1, 1, "proved")  # one word: one increment
    r = _kernel("atom.shared.add.u32 %r8, [%r4], 1;", index="shl.b32 %r6, %r1, 5;", block=32)
    (line,) = r.instructions
    assert (line.wavefronts, line.verdict) == (32, "refuted")  # 32 words on bank 0
    assert line.conflict.lanes == (0, 1) and '"instr":"ld32"' in line.conflict.reproduce


MBARRIER = """.version 8.0
.target {target}
.address_size 64
.visible .entry k()
{{
 .reg .b64 %rd<4>;
 .reg .b32 %r<4>;
 .reg .pred %p<3>;
 .shared .align 8 .b8 bar[8];
 mov.u32 %r3, bar;
 mbarrier.init.shared.b64 [%r3], 32;
 bar.sync 0;
 mbarrier.arrive.shared.b64 %rd1, [%r3];
WAIT:
 mbarrier.test_wait.shared.b64 %p1, [%r3], %rd1;
 @!%p1 bra WAIT;
}}
"""


@needs_sass
def test_an_mbarrier_is_what_its_sass_is_on_each_arch():
    """sm90 runs mbarriers as SYNCS (another engine's: no LSU wavefronts, measured): counted 0; sm80
    runs them as STS.64, ATOMS.ARRIVE.64 and LDS, which Nsight Compute counts under the store,
    atomic and load totals: those lines, totals and the kernel are unknown."""
    r90 = bankproof.kernel(MBARRIER.format(target="sm_90"), block=32, language="ptx", arch="sm90")
    assert r90.verdict == "proved" and all(i.wavefronts == 0 for i in r90.instructions)
    assert all("SYNCS" in i.reason and i.rests_on == "measured" for i in r90.instructions)
    r80 = bankproof.kernel(MBARRIER.format(target="sm_80"), block=32, language="ptx", arch="sm80")
    assert r80.verdict == "unknown" and r80.exit_code == 3
    assert {t.kind: t.instructions for t in r80.totals if t.kind != "mbarrier"} == {
        "ld": None,
        "st": None,
        "atomic": None,
    }
    assert [ln.verdict for ln in r80.lines] == ["unknown"]
    assert "ATOMS.ARRIVE.64" in next(i.reason for i in r80.instructions if "arrive" in i.instr)
