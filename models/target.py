"""The targets: the one place that knows which archs exist, their vendor, warp size and banks,
how far their rules are measured, which shared-memory instructions they have, and how to build
one access and count it. Every command goes through here; nothing else names a vendor.

A target's *model* is how its hardware serves one warp instruction:

- ``phases`` (:mod:`bankproof.models.hardware`): 32 lanes, the lanes split into phases by the
  instruction's width; a phase costs the most distinct words one bank is asked for. Measured
  on an H200 (sm90) with Nsight Compute; the other archs are assumed to follow it.
- ``lane groups`` (:mod:`bankproof.models.lds`): 64 lanes served in published groups; a group
  costs the most distinct words one bank is asked for. From published facts only.

Adding an arch is one entry in :data:`TARGETS` (``docs/explanation/design.md`` works an example).

>>> t = get("gfx942")
>>> t.vendor, t.warp, t.banks, t.model
('amd', 64, 32, 'lane groups')
>>> [t.arch for t in TARGETS.values() if t.model == "phases"]
['sm80', 'sm90', 'sm100']
>>> a = build("sm90", LinearLayout.from_bases({"lane": [[1], [2], [4], [8], [16]]}, {"i": 32}),
...           LinearLayout.from_bases({"offset": [[1], [2], [4], [8], [16]]}, {"i": 32}), 32, "load")
>>> c = count("sm90", a)
>>> a.instr.short, int(c.counts.sum()), int(c.ideals.sum()), c.status
('ld32', 1, 1, 'measured')
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

import numpy as np
from bankproof.models import hardware, lds
from bankproof.models.access import WarpInstructions, build_access
from bankproof.models.errors import InputError
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout

ALL_COMMANDS = frozenset(
    {"verify", "layout", "wavefronts", "synth", "explain", "convert", "show", "gpu", "workbench",
     "scan", "optimum", "ledger", "corpus", "kernel"}
)  # fmt: skip

# Published sources of the lane-group rules (each result names the rule it used).
_CK_DOC = "AMD CK-Tile documentation, 'Understanding AMD GPU LDS and Bank Conflicts'"
_ROCM_BLOG = "ROCm blog 'Avoiding LDS Bank Conflicts on AMD GPUs Using CK-Tile Framework' (2025)"
_GCN_GUIDE = "AMD OpenCL optimization guide (GCN), 5.2 'Local Memory (LDS) Optimizations': half waves"
_HIPKITTENS = "HipKittens' published LDS phase measurements on an MI355X (analysis/paper_experiments/phases)"
# Triton 3.9.0 SwizzleTest.cpp bruteforceBankConflictsPerWavefront64: below 128 bits numBanks/(bits/32) lanes
_TRITON_WAVE64 = (
    "Triton's wave64 bank-conflict reference (SwizzleTest.cpp: a phase is banks / "
    "words-per-lane consecutive lanes)"
)


@dataclass(frozen=True)
class Target:
    """One arch. ``status`` is what its rules rest on (``measured``: Nsight Compute runs recorded
    in ``gpu_checks/results/`` on this arch; ``assumed``: another arch's measured rules;
    ``assumed (published)``: vendors' and others' published facts); ``triton`` the backend and
    arch Triton compiles for; ``commands`` what bankproof models on it; ``rules`` the lane-group
    instructions (``instr -> (group sizes or coset span, source)``)."""

    arch: str
    vendor: str
    product: str
    warp: int
    banks: int
    model: str
    status: str
    triton: tuple[str, int | str]
    commands: frozenset[str]
    cc: int = 0  # NVIDIA compute capability (instructions name the oldest they run on)
    rules: tuple = ()
    corpus_default: bool = False

    @property
    def matrix(self) -> bool:
        """Whether it has the matrix instructions (``ldmatrix``/``stmatrix``) of the phase model."""
        return self.model == "phases"

    @property
    def row_bytes(self) -> int:
        """The bytes one row of banks holds (what a wavefront, or a lane group's cycle, serves)."""
        return self.banks * 4 if self.model == "lane groups" else 128

    @property
    def cost_unit(self) -> str:
        """What an access's count counts: ``wavefront`` (phase model) or ``cycle`` (lane groups)."""
        return units(self.model)[1]

    @property
    def counts_from_bases(self) -> bool:
        """Whether a count follows from the layout's bases (the phase model's linear rules)."""
        return self.model == "phases"

    @property
    def picks_instructions(self) -> bool:
        """Whether an ``auto`` access gets its cheapest instruction (the phase model's forms)."""
        return self.model == "phases"

    @property
    def partial_warps(self) -> bool:
        """Whether an instruction may run with lanes off (the phase model was measured so)."""
        return self.model == "phases"

    def has(self, instr: str) -> bool:
        """Whether the phase model's ``instr`` runs here (``stmatrix`` needs sm90).

        >>> get("sm80").has("stsm.x4"), get("sm90").has("stsm.x4"), get("gfx942").has("ld32")
        (False, True, False)
        """
        return self.model == "phases" and hardware.instruction(instr).min_arch <= self.cc

    def refuse(self, command: str, where: str) -> InputError:
        """The error for a command not modeled on this target."""
        names = [c for c in _SHOWN if c in self.commands]
        takes = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)
        v = self.vendor.upper()
        return InputError(where, "arch", f"is an {v} model: only {takes} take {v} archs so far", self.arch)

    def not_modeled(self, what: str) -> str:
        """Why a report leaves ``what`` (``optimum``, ``ledger``) out on this target."""
        return _NOT_MODELED[(self.model, what)]


_NV_ALL = ALL_COMMANDS
_SHOWN = ("verify", "layout", "wavefronts", "synth", "explain", "show", "convert")  # named in refusals
_LDS_COMMANDS = frozenset({*_SHOWN, "scan", "corpus"})

TARGETS: dict[str, Target] = {
    t.arch: t
    for t in (
        Target("sm80", "nvidia", "Ampere (A100)", 32, 32, "phases", "assumed", ("cuda", 80), _NV_ALL, cc=80,
               corpus_default=True),
        Target("sm90", "nvidia", "Hopper (H100, H200)", 32, 32, "phases", "measured", ("cuda", 90), _NV_ALL,
               cc=90, corpus_default=True),
        Target("sm100", "nvidia", "Blackwell (B200)", 32, 32, "phases", "assumed", ("cuda", 100), _NV_ALL,
               cc=100, corpus_default=True),
        Target("gfx942", "amd", "CDNA3 (MI300)", 64, 32, "lane groups", "assumed (published)",
               ("hip", "gfx942"), _LDS_COMMANDS, rules=(
                   ("ds_write_b128", ("consecutive", 8), _CK_DOC),
                   ("ds_read_b128", ("cosets", (1, 2, 20)), _ROCM_BLOG),
                   ("ds_read_b64", ("consecutive", 16), _TRITON_WAVE64),
                   ("ds_read_b32", ("consecutive", 32), _GCN_GUIDE),
                   ("ds_write_b32", ("consecutive", 32), _GCN_GUIDE),
               )),
        Target("gfx950", "amd", "CDNA4 (MI350/MI355)", 64, 64, "lane groups", "assumed (published)",
               ("hip", "gfx950"), _LDS_COMMANDS, rules=(
                   ("ds_read_b32", ("consecutive", 64), _TRITON_WAVE64),
                   ("ds_read_b64", ("consecutive", 32), _HIPKITTENS),
                   ("ds_write_b64", ("consecutive", 16), _HIPKITTENS),
                   ("ds_read_b128", ("cosets", (1, 2, 12, 20)), _HIPKITTENS),
               )),
    )
}  # fmt: skip
ARCHS = tuple(TARGETS)
# where the SASS tools (ptxas, nvdisasm) of the NVIDIA archs are installed from PyPI: (import name,
# folder under it), newest first; Triton's wheel carries its own in backends/nvidia/bin
SASS_TOOL_PACKAGES = (("nvidia.cu13", "bin"), ("nvidia.cuda_nvcc", "bin"), ("nvidia.cuda_nvdisasm", "bin"))
SASS_TOOLS_IN_TRITON = ("backends", "nvidia", "bin")
_NOT_MODELED = {
    ("lane groups", "optimum"): "AMD: the optimum search is NVIDIA-only so far",
    ("lane groups", "ledger"): "AMD: the ledger reads NVIDIA PTX only; AMDGCN is not read yet",
}
MEASURED = tuple(t.arch for t in TARGETS.values() if t.status == "measured")
UNMODELED_REASON = f"paired wide loads are measured on {', '.join(MEASURED)} only"


def get(arch: object, where: str = "arch", field: str = "arch") -> Target:
    """The target of ``arch`` (a name, or a :class:`Target` itself), or an input error naming
    ``field``.

    >>> get("sm90").status
    'measured'
    """
    if isinstance(arch, Target):
        return arch
    if not isinstance(arch, str) or arch not in TARGETS:
        raise InputError(where, field, f"must be one of {', '.join(ARCHS)}", arch)
    return TARGETS[arch]


def check_arch(arch: object, where: str = "arch", field: str = "arch") -> str:
    """``arch`` if a target knows it, else an input error naming ``field``."""
    return get(arch, where, field).arch


def require(arch: str, command: str, where: str) -> Target:
    """The target of ``arch`` when ``command`` is modeled on it, else the input error saying so."""
    t = get(arch, where)
    if command not in t.commands:
        raise t.refuse(command, where)
    return t


def from_triton(attr: str | None) -> Target:
    """The target a TTGIR module's ``ttg.target`` names (``cuda:90``, ``hip:gfx942``). A target
    with no entry, or none named, is refused: counting it with another arch's model would be a
    guess.

    >>> from_triton("hip:gfx950").arch, from_triton("cuda:90").status
    ('gfx950', 'measured')
    >>> from_triton("cuda:75")
    Traceback (most recent call last):
    ...
    bankproof.models.errors.InputError: ttgir: ttg.target has no model here (cuda:80, ...), got cuda:75
    """
    backend, _, name = (attr or "").partition(":")
    for t in TARGETS.values():
        if t.triton == (backend, int(name) if name.isdigit() and len(name) < 10 else name):
            return t
    known = ", ".join(f"{t.triton[0]}:{t.triton[1]}" for t in TARGETS.values())
    if attr is None:
        raise InputError("ttgir", "ttg.target", f"is not given: the module must name its target ({known})")
    raise InputError("ttgir", "ttg.target", f"has no model here ({known})", attr)


def rule(arch: str, instr: str) -> lds.Rule:
    """The lane-group rule of ``instr`` on a lane-group target (no groups when unpublished).

    >>> rule("gfx942", "ds_read_b128").ngroups, rule("gfx942", "ds_read_b64").ngroups
    (8, 4)
    >>> rule("gfx942", "ds_write_b64").groups is None  # nothing published
    True
    """
    t = get(arch)
    groups, source = None, lds.UNPUBLISHED
    for name, (shape, arg), src in t.rules:
        if name == instr:
            groups = lds.consecutive(arg, t.warp) if shape == "consecutive" else lds.cosets(list(arg), t.warp)
            source = src
    return lds.rule(t.arch, t.banks, t.warp, instr, groups, source)


# ----- one access: build it, count it -----------------------------------------------------------
@dataclass(frozen=True)
class Count:
    """What an access costs on a target, per warp instruction: ``counts`` (wavefronts, or cycles of
    lane groups) and ``ideals``; ``unknown`` where the model cannot say (``reason``); ``status``
    what the answer rests on; ``rule`` the lane-group rule in words (None for the phase model)."""

    counts: np.ndarray
    ideals: np.ndarray
    unknown: np.ndarray
    status: str
    reason: str | None = None
    rule: str | None = None

    @property
    def known(self) -> bool:
        return not bool(self.unknown.any())


def build(
    arch: str,
    dist: LinearLayout,
    memory: LinearLayout | PaddedLayout,
    elem_bits: int,
    kind: str,
    instr: str = "auto",
) -> WarpInstructions:
    """Every warp instruction of an access on ``arch`` (``instr`` ``auto``: the widest legal
    vector, as the compilers pick it). The last few are kept (read-only), so a command that
    counts an access and then draws it (``verify --html``) enumerates it once."""
    return _build(get(arch), dist, memory, elem_bits, kind, instr)


@functools.lru_cache(maxsize=8)
def _build(t: Target, dist, memory, elem_bits: int, kind: str, instr: str) -> WarpInstructions:
    if t.model == "lane groups":
        a = lds.build(dist, memory, elem_bits, kind, instr, lambda name: rule(t.arch, name), t.warp, t.arch)
    else:
        a = build_access(dist, memory, elem_bits, kind, instr)
        check_instr(t, a.instr)
    for arr in (a.addresses, a.warp, a.register, a.coords, a.block, a.elements):
        if isinstance(arr, np.ndarray):
            arr.setflags(write=False)
    return a


def check_instr(t: Target, ins: hardware.Instr) -> None:
    """Refuse an instruction ``t`` does not have (``stmatrix`` before sm90, ...)."""
    if t.cc and ins.min_arch > t.cc:
        raise InputError("access", "instr", f"needs sm{ins.min_arch} or newer", f"{ins.name} on {t.arch}")


def clear_caches() -> None:
    """Forget the kept accesses (benchmarks time cold calls)."""
    _build.cache_clear()


def count(arch: str, a: WarpInstructions, active: np.ndarray | None = None) -> Count:
    """The access's cost on ``arch`` (see :class:`Count`); ``active``: lanes that issue (all)."""
    t, n = get(arch), len(a.addresses)
    if t.model == "lane groups":
        r = a.instr
        if r.groups is None:
            zero = np.zeros(n, dtype=np.int64)
            return Count(zero, zero, np.ones(n, dtype=bool), t.status, r.text, r.text)
        counts, ideals = lds.evaluate(r, a.addresses)
        return Count(counts, ideals, np.zeros(n, dtype=bool), t.status, None, r.text)
    act = np.ones(a.addresses.shape, dtype=bool) if active is None else active
    return count_rows(arch, a.instr, a.addresses, act)


def count_rows(
    arch: str, ins: hardware.Instr, offsets: np.ndarray, active: np.ndarray, check: bool = True
) -> Count:
    """:func:`count` of rows of 32 lane byte offsets (``(N, 32)``) of one instruction on a
    phase-model ``arch``: what an access's warp instructions cost, given directly (``check``:
    refuse negative or misaligned offsets; off for rows an access's bases built)."""
    counts, ideals, _ = hardware.evaluate(ins, offsets, active, check=check)
    unknown = unmeasured(get(arch), ins, offsets, active)
    return Count(counts, ideals, unknown, status(arch, ins), UNMODELED_REASON if unknown.any() else None)


def units(model: str) -> tuple[str, str]:
    """What serves a count's unit at a time and the unit, for a result that names its model.

    >>> units("phases"), units("lane groups")
    (('wavefront', 'wavefront'), ('lane', 'cycle'))
    """
    return ("lane", "cycle") if model == "lane groups" else ("wavefront", "wavefront")


def status(arch: str, ins: hardware.Instr | None = None) -> str:
    """What ``arch``'s answers rest on; ``cp.async.cg`` is always ``assumed`` (see
    :data:`bankproof.models.hardware.COPY_NOTE`).

    >>> status("sm90"), status("sm90", hardware.instruction("cp16.cg")), status("gfx950")
    ('measured', 'assumed', 'assumed (published)')
    """
    t = get(arch)
    if ins is not None and getattr(ins, "variant", "") == "cg":
        return "assumed"
    return t.status


def unmeasured(t: Target, ins: hardware.Instr, offsets: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Per warp instruction: where the phase model cannot say on ``t``. Paired 64/128-bit loads
    (lane ^ 1 or lane ^ 2 share addresses) merge phases on sm90; whether they do elsewhere is not
    measured, so off the measured archs their count is unknown.

    >>> offs = np.zeros((1, 32), dtype=np.int64); act = np.ones((1, 32), dtype=bool)
    >>> ld128 = hardware.instruction("ld128")
    >>> [unmeasured(get(a), ld128, offs, act).tolist() for a in ("sm80", "sm90")]
    [[True], [False]]
    """
    if t.status == "measured" or ins.op != "ld" or ins.width < 8:
        return np.zeros(np.shape(offsets)[:-1], dtype=bool)
    return hardware.paired(np.asarray(offsets), np.asarray(active, dtype=bool))


def conflict(arch: str, ins: hardware.Instr, offsets: np.ndarray) -> dict:
    """Two lanes of one warp instruction (its 32 lane byte ``offsets``) that one bank serves
    different words in the same wavefront (phase) or lane group (the lowest such pair):
    ``{"lanes", "bank", "phase"}``."""
    if get(arch).model == "lane groups":
        pair = lds.conflict_pair(ins, offsets)
        return {"lanes": pair["lanes"], "bank": pair["bank"], "phase": pair["group"]}
    return hardware.conflict_pair(ins, offsets)


def pair(arch: str, ins: hardware.Instr, offsets: np.ndarray, lanes: list[int]) -> dict:
    """``lanes`` (two lanes of one warp instruction another engine found colliding) with the
    bank they share (None if none) and the phase (lane group) of the first."""
    t = get(arch)
    width = ins.width if t.model == "lane groups" else None
    banks = []
    for lane in lanes:
        first = int(offsets[lane]) // hardware.BANK_BYTES
        words = range(first, first + width // hardware.BANK_BYTES) if width else ins.words(int(offsets[lane]))
        banks.append({w % t.banks for w in words})
    common = banks[0] & banks[1]
    if t.model == "lane groups":
        phase = int(ins.groups[lanes[0]])
    else:
        act = np.ones(t.warp, dtype=bool)
        phase = int(hardware.phase_ids(ins, offsets[None], act[None])[0][lanes[0]])
    return {"lanes": list(lanes), "bank": min(common) if common else None, "phase": phase}


def reproducer(arch: str, ins: hardware.Instr, offsets: np.ndarray) -> str:
    """The ``bankproof wavefronts`` input line that replays one warp instruction.

    >>> reproducer("sm90", hardware.instruction("ld32"), np.arange(32) * 4)[:40]
    '{"instr":"ld32","byte_offsets":[0,4,8,12'
    """
    head = f'{{"arch":{json.dumps(arch)},' if get(arch).model == "lane groups" else "{"
    return f'{head}"instr":{json.dumps(ins.short)},"byte_offsets":[{",".join(map(str, offsets.tolist()))}]}}'
