"""The ledger built from the kernel machine too (``verifier/triton/ledger_machine.py``): with the
launch wholly given, a run of the compile's PTX totals what the ledger's per-execution reading
cannot (addresses that move each iteration), must equal it where both decide (a difference is a
disagreement: exit 4), and is not run when a value it would read is missing."""

from __future__ import annotations

from pathlib import Path

import pytest
from bankproof.verifier.cli.main import main
from bankproof.verifier.triton import ledger, ledger_machine
from bankproof.verifier.triton.scan import scan_text

DATA = Path(__file__).resolve().parent / "data" / "ledger_machine"
TTGIR, PTX = (
    (DATA / f"k.{x}").read_text() for x in ("ttgir", "ptx")
)  # a reduce's scratch, moving each iteration


def test_a_store_ptxas_merges_across_iterations_is_unknown():
    """The SASS decides: ptxas unrolls the loop and merges two iterations' 4-byte stores into one
    STS.64 (and a remainder STS): no rule counts that, so the entry is unknown with the SASS named,
    where the PTX alone said 8 executions of 2 wavefronts."""
    pytest.importorskip("bankproof.verifier.kernel.sass")
    from bankproof.verifier.kernel import sass

    if sass.tools() is None:
        pytest.skip("ptxas and nvdisasm are not installed")
    (e,) = ledger.build(scan_text(TTGIR), TTGIR, PTX, {"K": 8}).entries
    assert (
        e.wavefronts is None
        and not e.counted
        and e.reason == "the SASS runs STS.64, STS for it: not modelled"
    )


def test_addresses_that_move_each_iteration_are_totalled_by_the_run(monkeypatch):
    """Each iteration stores at tid*8 + i*4 (2 wavefronts): the per-execution reading cannot know
    i; with K given, the run of the PTX counts K executions of 2 wavefronts (ideal 1) where no SASS
    is at hand (the counts then rest on the PTX)."""
    from bankproof.verifier.kernel import sass

    monkeypatch.setattr(sass, "disassemble_cached", lambda *a: None)
    (open_,) = ledger.build(scan_text(TTGIR), TTGIR, PTX, {}).entries
    assert open_.wavefronts is None and "loop-carried" in open_.reason and not open_.counted
    led = ledger.build(scan_text(TTGIR), TTGIR, PTX, {"K": 8})
    (e,) = led.entries
    assert (e.executions, e.wavefronts, e.ideal, e.total_wavefronts, e.total_instructions) == (8, 2, 1, 16, 8)
    assert e.source == "ptx+run" and e.note == ledger_machine.RUN_NOTE and e.counted
    assert (led.totals["st"].wavefronts, led.totals["st"].ideal) == (16, 8) and led.incomplete == ()


def test_a_run_that_differs_from_the_ledger_is_a_disagreement(monkeypatch, tmp_path, capsys):
    """Where the ledger totals an entry itself, the run must give the same count; a run that
    differs (simulated: one wavefront more) is named and the scan exits 4."""
    const = PTX.replace("shl.b32 \t%r6, %r5, 2;", "mov.u32 \t%r6, 0;")  # the same addresses each iteration
    (e,) = ledger.build(scan_text(TTGIR), TTGIR, const, {"K": 8}).entries
    assert (e.executions, e.wavefronts, e.source) == (8, 2, "ptx")  # the ledger's own count, the run's equal
    real = ledger.run_counts

    def off_by_one(program, launch):
        return {k: r.with_answer(wavefronts=r.wavefronts + 1) for k, r in real(program, launch).items()}

    monkeypatch.setattr(ledger, "run_counts", off_by_one)
    led = ledger.build(scan_text(TTGIR), TTGIR, const, {"K": 8})
    assert led.disagreements == (
        "k.py:7:3: st32 the ledger counts 16 wavefronts in 8 instructions per CTA, a run of the PTX 17 in 8",
    )
    (tmp_path / "k.ttgir").write_text(TTGIR)
    (tmp_path / "k.ptx").write_text(const)
    args = ["triton", "scan", str(tmp_path / "k.ttgir"), "--ptx", str(tmp_path / "k.ptx"), "--arg", "K=8"]
    assert main(args) == 4
    assert "a run of the PTX 17 in 8" in capsys.readouterr().err


def test_no_run_without_every_value_it_reads(monkeypatch):
    """K not given: the run would need it, so the ledger answers per iteration alone."""

    def no(*a, **k):
        raise AssertionError("run without a wholly given launch")

    monkeypatch.setattr(ledger, "run_counts", no)
    (e,) = ledger.build(scan_text(TTGIR), TTGIR, PTX, {"program_id_x": 0}).entries
    assert e.executions is None and e.wavefronts is None


@pytest.mark.parametrize("given, launch", [
    ({"K": 8}, ((32, 1, 1), (1, 1, 1), (0, 0, 0), (("k_param_0", 8),))),
    ({}, None),
])  # fmt: skip
def test_the_launch_is_the_arguments_given(given, launch):
    from bankproof.verifier.ptx.parse import parse_program

    _, code, _ = parse_program(PTX)
    got = ledger_machine.launch_for(code, ["K"], given)
    assert (got if got is None else (got.block, got.grid, got.cta, got.args)) == launch
