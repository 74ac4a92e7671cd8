"""``bankproof kernel FILE --open NAME=LO..HI[:STEP]``: a kernel argument left open over a range and
answered for every value in it. The kernel is read once and one CTA run for each value, so each
shared-memory instruction is either proved conflict-free for every value of the range (a proof by
exhaustion: every value run, none left out) or refuted at the smallest value where it conflicts,
with that run's lanes; its cost as a function of the value is given by residue class (the
smallest modulus the range's results depend on alone), exact over the range and claimed nowhere
outside it.

>>> OpenRange.parse("pitch=32..64:2").values()[:3]
[32, 34, 36]
>>> residue_text("pitch", {1, 3, 5, 7}, 8), residue_text("pitch", {0, 8}, 16)
('pitch ≡ 1 (mod 2)', 'pitch ≡ 0 (mod 8)')
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass

from bankproof.models.archs import DEFAULT_ARCH
from bankproof.models.errors import InputError, TimeLimit
from bankproof.verifier.api.kernel import (
    MAX_STEPS,
    WHERE,
    by_param,
    check_launch,
    check_param,
    launch_of,
    param_index,
    read_checked,
    with_buffers,
)
from bankproof.verifier.kernel.analyse import analyse
from bankproof.verifier.kernel.records import KernelResult
from bankproof.verifier.results import SCHEMA, Conflict, Result, optional

MAX_VALUES = 1024  # runs of the kernel one open argument may cost
MAX_MODULUS = 64  # residue classes are looked for up to this many steps of the range


@dataclass(frozen=True)
class OpenRange(Result):
    """An argument's values ``lo, lo + step, ..., <= hi``."""

    name: str
    lo: int
    hi: int
    step: int = 1

    @staticmethod
    def parse(text: str) -> OpenRange:
        m = re.fullmatch(
            r"\s*([\w$]{1,200})\s*=\s*(-?\d{1,12})\s*\.\.\s*(-?\d{1,12})\s*(?::\s*(\d{1,12}))?\s*", text
        )
        if not m:
            raise InputError(WHERE, "--open", "must be NAME=LO..HI or NAME=LO..HI:STEP (integers)", text)
        return OpenRange.of(m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4) or 1))

    @staticmethod
    def of(name: str, lo: int, hi: int, step: int = 1) -> OpenRange:
        if step < 1 or hi < lo:
            raise InputError(WHERE, "--open", f"{name}: needs LO <= HI and a step >= 1", f"{lo}..{hi}:{step}")
        count = (hi - lo) // step + 1
        if count > MAX_VALUES:
            raise InputError(
                WHERE, "--open", f"{name} has {count} values, more than {MAX_VALUES} runs", count
            )
        return OpenRange(name, lo, hi, step)

    def values(self) -> list[int]:
        return list(range(self.lo, self.hi + 1, self.step))


@dataclass(frozen=True)
class ValueClass(Result):
    """The values of the range (``values``, as a residue class or a list) on which an instruction
    costs ``wavefronts`` in ``instructions`` (``verdict`` its verdict there)."""

    values: str
    wavefronts: int | None
    instructions: int | None
    ideal: int | None
    verdict: str
    members: tuple[int, ...] = ()  # the values of the range in this class, each run


@dataclass(frozen=True)
class OpenInstruction(Result):
    """One shared-memory instruction over every value: ``proved`` (conflict-free at each),
    ``refuted`` (``smallest`` is the least value where it conflicts, ``conflict`` its lanes there)
    or ``unknown``; ``classes``: its cost by value."""

    ptx_line: int
    instr: str
    location: str
    verdict: str
    classes: tuple[ValueClass, ...]
    smallest: int | None = optional()
    conflict: Conflict | None = optional()


@dataclass(frozen=True)
class OpenResult(Result):
    """``bankproof kernel --open``: the kernel's instructions over every value of ``argument``."""

    schema: int
    source: str
    kernel: str
    argument: OpenRange
    runs: int
    verdict: str
    instructions: tuple[OpenInstruction, ...]
    unknown: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        return {"proved": 0, "refuted": 1, "unknown": 3}[self.verdict]


def kernel_open(
    source: str | os.PathLike,
    open_arg: OpenRange | str,
    *,
    block: int | str | tuple = 128,
    kernel: str | None = None,
    grid: int | str | tuple = 1,
    cta: tuple | str = (0, 0, 0),
    dynamic_smem: int = 0,
    args: Mapping[str, int] | None = None,
    include: tuple[str, ...] = (),
    defines: Mapping[str, str] | None = None,
    language: str | None = None,
    arch: str = DEFAULT_ARCH,
    max_steps: int = MAX_STEPS,
    time_limit: float = 120.0,
    buffers: Mapping[str, object] | None = None,
) -> OpenResult:
    r"""The kernel (as :func:`~bankproof.verifier.api.kernel.kernel` reads it) for every value of
    ``open_arg`` (an :class:`OpenRange` or ``"NAME=LO..HI[:STEP]"``); ``time_limit`` bounds all the
    runs together (values not reached make the answer ``unknown``, never ``proved``).

    >>> ptx = (".visible .entry k(.param .u32 stride) {\n .shared .align 4 .b8 buf[16384];\n"
    ...        " ld.param.u32 %r9, [stride];\n mov.u32 %r1, %tid.x;\n mul.lo.s32 %r2, %r1, %r9;\n"
    ...        " shl.b32 %r3, %r2, 2;\n mov.u32 %r4, buf;\n add.s32 %r5, %r4, %r3;\n"
    ...        " ld.shared.u32 %r6, [%r5];\n}")
    >>> r = kernel_open(ptx, "stride=1..40", block=32)
    >>> (i,) = r.instructions
    >>> r.verdict, i.smallest, [(c.values, c.wavefronts) for c in i.classes][:3]
    ('refuted', 2, [('stride ≡ 1 (mod 2)', 1), ('stride ≡ 2 (mod 4)', 2), ('stride ≡ 4 (mod 8)', 4)])
    """
    rng = open_arg if isinstance(open_arg, OpenRange) else OpenRange.parse(str(open_arg))
    start = time.monotonic()
    try:
        src, names = read_checked(
            source, kernel, language, include, defines, arch, args, max_steps, time_limit
        )
    except TimeLimit as e:
        name = "<text>" if isinstance(source, str) and "\n" in source else str(source)
        return OpenResult(
            1,
            name,
            kernel or "?",
            rng,
            0,
            "unknown",
            (),
            (f"stopped after 0 of {len(rng.values())} values ({e}: the time limit, not a result)",),
        )
    check_param(rng.name, src, names, "--open")
    given = dict(args or {})
    if param_index(rng.name, src, names) in {param_index(str(k), src, names) for k in given}:
        raise InputError(WHERE, "--open", "names an argument --arg also gives", rng.name)
    deadline = start + float(time_limit)
    results: dict[int, KernelResult] = {}
    unknown: list[str] = []
    xs = rng.values()
    for x in xs:
        left = deadline - time.monotonic()
        if left <= 0:
            unknown.append(f"stopped after {len(results)} of {len(xs)} values (the time limit, not a result)")
            break
        launch = check_launch(
            src, launch_of(block, grid, cta, dynamic_smem, by_param({**given, rng.name: x}, names))
        )
        launch = with_buffers(launch, src, names, buffers)
        results[x] = analyse(src, launch, arch, max_steps, left)
    instructions = _instructions(rng, results)
    if unknown:
        instructions = tuple(i if i.verdict == "refuted" else _unknown(i) for i in instructions)
    for x, r in results.items():
        unknown += [f"{rng.name}={x}: {u}" for u in r.unknown]
    verdicts = {i.verdict for i in instructions}
    verdict = (
        "refuted" if "refuted" in verdicts else "unknown" if "unknown" in verdicts or unknown else "proved"
    )
    first = next(iter(results.values()), None)
    where = first.source if first else str(source)
    return OpenResult(SCHEMA, where, src.code.name, rng, len(results), verdict, instructions,
                      tuple(dict.fromkeys(unknown)))  # fmt: skip


def _unknown(i: OpenInstruction) -> OpenInstruction:
    return i.with_answer(verdict="unknown", conflict_free=None)


def _instructions(rng: OpenRange, results: dict[int, KernelResult]) -> tuple[OpenInstruction, ...]:
    """Each instruction's answers over the values run, grouped by residue class."""
    by_line: dict[int, dict[int, object]] = {}
    for x, r in results.items():
        for ins in r.instructions:
            by_line.setdefault(ins.ptx_line, {})[x] = ins
    out = []
    for line, runs in sorted(by_line.items()):
        first = next(iter(runs.values()))
        where = f"{first.location.file}:{first.location.line}" if first.location else f"PTX line {line}"
        refuted = [x for x, i in runs.items() if i.verdict == "refuted"]
        verdict = (
            "refuted"
            if refuted
            else "proved"
            if all(i.verdict == "proved" for i in runs.values())
            else "unknown"
        )
        if len(runs) < len(results):  # not executed at some values: no answer there
            verdict = "refuted" if refuted else "unknown"
        key = {x: (i.wavefronts, i.instructions, i.ideal, i.verdict) for x, i in runs.items()}
        classes = tuple(
            ValueClass(text, *k, members=tuple(x for x in sorted(key) if key[x] == k))
            for text, k in group(rng, key)
        )
        smallest = min(refuted) if refuted else None
        out.append(OpenInstruction(line, first.instr, where, verdict, classes, smallest,
                                   runs[smallest].conflict if smallest is not None else None))  # fmt: skip
    return tuple(out)


def group(rng: OpenRange, key: dict[int, tuple]) -> list[tuple[str, tuple]]:
    """``(values, answer)`` for each distinct answer: by residue class modulo the smallest multiple
    of the step the answers depend on alone over the range, else the values listed.

    >>> group(OpenRange("n", 0, 7), {x: (x % 2,) for x in range(8)})
    [('n ≡ 0 (mod 2)', (0,)), ('n ≡ 1 (mod 2)', (1,))]
    """
    xs = sorted(key)
    answers = list(dict.fromkeys(key[x] for x in xs))
    if len(answers) == 1:
        return [
            (
                f"every {rng.name} in {rng.lo}..{rng.hi}" + (f" step {rng.step}" if rng.step > 1 else ""),
                answers[0],
            )
        ]
    for k in range(1, MAX_MODULUS + 1):
        m = k * rng.step
        seen: dict[int, tuple] = {}
        if all(seen.setdefault(x % m, key[x]) == key[x] for x in xs) and len(seen) < len(xs):
            return [
                (residue_text(rng.name, {r for r, a in seen.items() if a == ans}, m), ans) for ans in answers
            ]
    return [(f"{rng.name} = {_listed([x for x in xs if key[x] == ans])}", ans) for ans in answers]


def residue_text(name: str, residues: set[int], m: int) -> str:
    """``name ≡ a (mod b)`` for the coarsest ``b`` dividing ``m`` that gives exactly ``residues``
    (mod ``m``), else the residues listed."""
    for b in sorted(d for d in range(1, m + 1) if m % d == 0):
        for a in range(b):
            if {r for r in range(m) if r % b == a} == residues:
                return f"{name} ≡ {a} (mod {b})"
    return f"{name} ≡ {', '.join(map(str, sorted(residues)))} (mod {m})"


def _listed(xs: list[int]) -> str:
    return ", ".join(map(str, xs[:12])) + (f", ... ({len(xs)} values)" if len(xs) > 12 else "")


__all__ = ["kernel_open", "OpenRange", "OpenResult", "OpenInstruction", "ValueClass"]
