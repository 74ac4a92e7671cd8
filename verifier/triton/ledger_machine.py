"""The ledger built from the kernel machine too: where the launch is wholly given (every integer
argument, and the program ids and grid wherever the PTX reads them), the compile's PTX is run for
that CTA by the machine ``bankproof kernel`` runs (:mod:`bankproof.verifier.kernel`), and its count
of each PTX instruction enters the ledger's entries:

- an entry the ledger counted per execution and per CTA must equal the run (else a disagreement,
  which the commands report and exit 4 on); a cp.async whose global lines the ledger left as a
  range takes the run's count of the lines these arguments give, where it lies in the range (its
  total alone where the executions differ: a masked-off tail copy reads no line);
- an entry the ledger could not total (a trip count or addresses it could not derive from the
  TTGIR) takes the run's totals, with its executions and its wavefronts per execution where
  they are whole.

Left to the ledger: instructions the run does not decide (after a branch on loaded data, a TMA
descriptor rewrite, a zero-fill ``cp.async.cg``), and launches not wholly given: the run needs a
value for everything it reads; the ledger answers per iteration without them.

>>> from bankproof.verifier.ptx.parse import parse_program
>>> _, code, _ = parse_program('''.visible .entry k(.param .u32 k_param_0, .param .u64 .ptr .global k_param_1)
... .reqntid 64
... {
...   mov.u32 %r1, %ctaid.x;
...   ret;
... }''')
>>> launch_for(code, ["n", "p"], {"n": 8}) is None  # %ctaid.x is read: the program id is needed
True
>>> launch_for(code, ["n", "p"], {"n": 8, "program_id_x": 0}).args
(('k_param_0', 8),)
"""

from __future__ import annotations

from collections.abc import Mapping

from bankproof.models.errors import InputError
from bankproof.verifier.kernel.analyse import KernelSource, analyse
from bankproof.verifier.kernel.buffers import Buffer
from bankproof.verifier.kernel.costs import ZFILL_CG
from bankproof.verifier.kernel.functions import with_functions
from bankproof.verifier.kernel.reconcile import DISAGREES, UNMODELLED
from bankproof.verifier.kernel.records import InstructionReport, Launch
from bankproof.verifier.ptx.module import KernelCode, PtxModule
from bankproof.verifier.results import FrozenMap
from bankproof.verifier.triton.measured_rules import NARROW_CA_NOTE

GUARD_KEY = "guard@PTX"  # a condition key: a guard predicate the run-time values decide

RUN_NOTE = "executions and wavefronts from a run of the kernel's PTX with the arguments given"
LINES_NOTE = "global lines counted from the addresses these arguments give (a run of the kernel's PTX)"
UNEVEN_NOTE = (
    "global lines counted from the addresses these arguments give (a run of the kernel's PTX); its "
    "executions differ (copies masked off read no line), so only the total is given"
)
MAX_SECONDS = 20.0  # the run's time limit: past it the ledger keeps its own answers


def launch_for(
    code: KernelCode,
    arg_names: list[str],
    args: Mapping[str, int] | None,
    buffers: Mapping[str, Buffer] | None = None,
) -> Launch | None:
    """The launch of one CTA when the arguments give all it reads, else ``None``: every integer
    parameter of the TTGIR's arguments (Triton's PTX lists them first, in order), and the program
    ids (``program_id_x``...) and grid (``num_programs_x``...) on each axis the PTX reads;
    ``buffers`` (by argument name or position) what pointer arguments point to."""
    args, buffers = args or {}, buffers or {}
    given, bufs, missing = [], [], []
    for i, ((_, name), arg) in enumerate(zip(code.params, arg_names)):
        buf = buffers.get(arg, buffers.get(str(i)))
        if buf is not None:
            bufs.append((name, buf))
        if name in code.pointers or buf is not None:
            continue
        if arg not in args:
            missing.append(arg)
            continue
        given.append((name, int(args[arg])))
    text = " ".join(o for op in code.body for o in op.operands)
    cta, grid = [0, 0, 0], [1, 1, 1]
    for i, axis in enumerate("xyz"):
        if f"%ctaid.{axis}" in text:
            if f"program_id_{axis}" not in args:
                missing.append(f"program_id_{axis}")
            else:
                cta[i] = int(args[f"program_id_{axis}"])
        if f"%nctaid.{axis}" in text:
            if f"num_programs_{axis}" not in args:
                missing.append(f"num_programs_{axis}")
            else:
                grid[i] = int(args[f"num_programs_{axis}"])
        grid[i] = max(grid[i], cta[i] + 1)
    if missing and buffers:  # buffers are read by the run, which needs the launch whole
        flags = ", ".join(f"--arg {m}=INT" for m in missing)
        raise InputError(
            "triton scan", "buffers", f"needs the launch whole (a run of one CTA reads it): {flags}"
        )
    if missing:
        return None
    block = tuple(code.block_hint or code.max_block or (1,)) + (1, 1)
    shown = tuple((name, arg) for (_, name), arg in zip(code.params, arg_names))
    return Launch(block=block[:3], grid=tuple(grid), cta=tuple(cta), args=tuple(given), buffers=tuple(bufs),
                  names=shown)  # fmt: skip


def run_counts(
    program: tuple[PtxModule, KernelCode], launch: Launch
) -> Mapping[int, InstructionReport] | None:
    """The run's report of each shared-memory instruction, by PTX line (``None``: the run did not
    finish within its limits)."""
    module, code = program
    src = KernelSource(code.name, "triton", module, with_functions(module, code))
    try:
        result = analyse(src, launch, max_seconds=MAX_SECONDS, second_engine=False)
    except InputError as e:
        if e.field == "buffer":  # the data given is refused (a load past its end, a null pointer)
            raise
        return None
    except (ValueError, KeyError, IndexError):  # PTX the machine refuses: the ledger keeps its answers
        return None
    return FrozenMap({r.ptx_line: r for r in result.instructions})


def fill(entries: list[dict], reports: Mapping[int, InstructionReport], disagreements: list[str]) -> None:
    """The run's counts into the draft entries (see the module docstring)."""
    for e in entries:
        if e["family"] not in ("lsu", "ldgsts") or e.get("executions") == 0:
            continue
        reps = [reports.get(line) for line in e["ptx_lines"]]
        odd = [r for r in reps if r is not None and r.rests_on in (UNMODELLED, DISAGREES)]
        if odd:  # the SASS runs it in a way no rule counts (split, mixed, unexplained): unknown
            e.update(wavefronts=None, ideal=None, counted=False, reason=odd[0].reason)
            for k in ("wavefronts_max", "total_wavefronts", "total_instructions"):
                e.pop(k, None)
            continue
        if any(r is None or r.wavefronts is None or r.instructions is None for r in reps):
            continue
        if any(r.family == "tensormap" or r.reason == ZFILL_CG for r in reps):
            continue
        ins, wf = sum(r.instructions for r in reps), sum(r.wavefronts for r in reps)
        if e.get("wavefronts") is not None and e.get("executions") is not None:
            _check(e, ins, wf, disagreements)
        elif not e.get("condition_key"):
            _take(e, ins, wf, sum(r.ideal or 0 for r in reps))


def _check(e: dict, ins: int, wf: int, disagreements: list[str]) -> None:
    """An entry the ledger totalled: the run must give the same; a cp.async's range of global lines
    takes the run's count where it lies in the range (a narrow ``.ca`` copy's measured excess, which
    no line count explains, keeps its top)."""
    runs = e["executions"]
    t_ins, t_wf = e["instructions"] * runs, e["wavefronts"] * runs
    keys = e.get("condition_key") or []
    if keys and keys[-1][0].startswith(GUARD_KEY) and ins <= t_ins and runs and not (ins % runs or wf % runs):
        e.update(instructions=ins // runs, wavefronts=wf // runs)  # the run decides the guard
        for k in ("condition", "condition_key", "depends_on"):
            e[k] = e[k][:-1]
            if not e[k]:
                e.pop(k)
        if "condition_key" not in e:
            e.pop("condition_why", None)
        return
    hi = e.get("wavefronts_max")
    top = t_wf if hi is None else hi * runs
    if ins == t_ins and t_wf <= wf <= top:
        if hi is None:  # (then wf == t_wf)
            return
        if wf % runs:  # the executions read different lines (a masked tail copy reads none)
            e.update(wavefronts=None, run_total_wavefronts=wf, lines_note=UNEVEN_NOTE)
            e.pop("wavefronts_max", None)
            return
        store, e["wavefronts"] = e["wavefronts"], wf // runs
        if e.get("lines_note") == NARROW_CA_NOTE:  # the excess measured above the lines stays
            e["wavefronts_max"] = e["wavefronts"] + store
            return
        e.pop("wavefronts_max", None)
        e["lines_note"] = LINES_NOTE
        return
    disagreements.append(
        f"{e['location']}: {e['instr']} the ledger counts {t_wf} wavefronts in {t_ins} instructions per "
        f"CTA, a run of the PTX {wf} in {ins}"
    )


def _take(e: dict, ins: int, wf: int, ideal: int) -> None:
    """An entry the ledger could not total takes the run's, where they are whole per execution."""
    per = e.get("instructions") or 0
    runs = e.get("executions")
    if runs is None:
        runs = ins // per if per and ins % per == 0 else None
    if runs == 0 and ins == 0 and wf == 0:  # the run never reached it (a loop of no trips): none issued
        e.update(executions=0)
    elif not runs or ins != runs * per or wf % runs or ideal % runs:
        return
    elif e.get("wavefronts") is not None and e["wavefronts"] * runs != wf:
        return  # the ledger's per-execution count stands; the run's differs: leave both unknown
    else:
        e.update(executions=runs, wavefronts=wf // runs, ideal=ideal // runs)
    e.update(counted=True, total_instructions=ins, total_wavefronts=wf)
    for k in ("executions_reason", "reason"):
        e.pop(k, None)
    e["source"] = (e.get("source") or "ptx") + "+run"
    e["note"] = RUN_NOTE if "note" not in e else f"{e['note']}; {RUN_NOTE}"
