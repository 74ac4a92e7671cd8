"""Text reports: verify, synth, convert and gpu results for people (``--json`` is the result's
own ``to_json()``).
"""

from __future__ import annotations

from bankproof.models import target
from bankproof.models.hardware import BANK_BYTES, COPY_NOTE, instruction
from bankproof.verifier.render import answer
from bankproof.verifier.results import (
    EXIT,
    ConstrainedSynthesis,
    ConvertResult,
    GpuResult,
    SynthResult,
    VerifyResult,
)


def exit_code(verdict: str) -> int:
    return EXIT[verdict]


def ptx_name(instr: str) -> str:
    """The PTX name of an instruction an answer names by its short one (``ld32``: ``ld.shared.b32``);
    another vendor's, as it is."""
    try:
        return instruction(instr).name
    except (KeyError, ValueError):
        return instr


def to_text(result: VerifyResult) -> str:
    """The verify report: one line per access, its conflict and Lemma 9.4's why."""
    report = result.to_dict()
    shape = "x".join(map(str, report["shape"]))
    mem = report["memory"]
    where = f"{shape} {report['dtype']} on {report['arch']}"
    lines = [f"{report['spec']}: {where}, memory {mem['notation']} {mem['text']}"]
    lines += [f"  warning: {w}" for w in mem.get("warnings", ())]
    width = max(len(a["name"]) for a in [*report["accesses"], *report.get("unread", ())])
    for acc, a in zip(result.accesses, report["accesses"], strict=True):
        line = f"{answer.cost(acc.answer)}  {answer.state(acc.answer)}  {answer.decided(acc.answer)}"
        instr = ptx_name(a["instr"])
        lines.append(f"  {a['name']:<{width}}  {a['kind']:<5} {a['instructions']} x {instr:<22} {line}")
        if a["rule"]:
            lines.append(f"    model: {a['rests_on']}: {a['rule']}")
        cx = a["conflict"]
        if cx:
            l0, l1 = cx["lanes"]
            where = f"warp {cx['warp']}, instruction {cx['instruction']} (register {cx['register']})"
            lines.append(
                f"    counterexample: lanes {l0} and {l1} of {where}, phase {cx['phase']}: "
                f"same bank {cx['bank']}, different words"
            )
            supplied = cx.get("supplied")
            for k, (lane, coords, addr) in enumerate(zip(cx["lanes"], cx["coords"], cx["byte_addresses"])):
                where = ", ".join(f"{key}={v}" for key, v in coords.items())
                word = addr // BANK_BYTES
                if supplied is None:
                    lines.append(
                        f"      lane {lane:>2}: ({where})  byte {addr}  bank {cx['bank']}  word {word}"
                    )
                    continue
                row = supplied[k]
                at = (
                    "(" + ", ".join(f"{key}={v}" for key, v in row.items()) + ")"
                    if row
                    else "no element's start"
                )
                lines.append(f"      lane {lane:>2}: supplies the row at byte {addr} {at}, bank {cx['bank']} "
                             f"word {word}; receives ({where})")  # fmt: skip
            lines.append(f"    reproduce: {cx['reproduce']}")
        why = a["engines"].get("algebra", {}).get("conflict_directions")
        if why:
            by = why[0] if len(why) == 1 else f"any sum of {', '.join(why)}"
            lines.append(
                f"    why (Lemma 9.4): lanes whose elements differ by {by} hit the same bank in another "
                f"segment: 2^{len(why)} words per bank"
            )
        if a["instr"].startswith("cp") and a["instr"].endswith(".cg"):
            lines.append(f"    note: {COPY_NOTE}")
        elif a["rests_on"] == "assumed":
            lines.append(f"    note: hardware model measured on sm90 only; {report['arch']} assumed the same")
    for u in report.get("unread", ()):
        lines.append(f"  {u['name']:<{width}}  {u['kind']:<5} not counted: {u['reason']}")
    lines.append(f"verdict: {report['verdict']} (exit {exit_code(report['verdict'])})")
    return "\n".join(lines) + "\n"


SYNTH_LABELS = {"formula": "formula", "swizzled_shared": "triton", "triton": "triton", "cute": "cute",
                "bases": "bases"}  # fmt: skip


def synth_text(r: SynthResult) -> str:
    """The synthesized layout in every notation, its bound and optimality proof, then the report."""
    info = r.synth
    lines = [
        f"optimal memory layout for writer {info.writer!r} and reader {info.reader!r} "
        f"(§5.4, {info.seconds * 1e3:.1f} ms):"
    ]
    notations = info.memory["notations"]
    for key, label in SYNTH_LABELS.items():
        if key in notations:
            text = notations[key]
            if key == "formula":
                text = f"offset({', '.join(r.dims)}) = {text}"
            if key == "cute":
                text += "   (element units)"
            lines.append(f"  {label + ':':9} {text}")
    opt_w = info.lower_bound_per_instruction[info.writer]
    opt_r = info.lower_bound_per_instruction[info.reader]
    met = "yes" if info.meets_lower_bound else "NO"
    lines.append(
        f"  lower bound per instruction: {opt_w} for {info.writer}, {opt_r} for {info.reader} "
        f"(phases; Lemma 9.5 at the §5.4 vector); met: {met}"
    )
    if info.optimal_over:
        lines.append(f"  optimal over: {info.optimal_over}")
        if info.universal_bound is not None:
            t = target.get(r.arch)
            unit = f"{t.row_bytes} per {t.cost_unit}"
            lines.append(f"  bound over every layout and instruction (bytes / {unit}): "
                         f"{info.universal_bound}")  # fmt: skip
    for ru in info.runners_up or ():
        vec, ins = "·".join(ru["vector"]) or "-", " + ".join(ru["instructions"])
        cost = " + ".join(map(str, ru["wavefronts"]))
        lines.append(f"  runner-up: vector {vec} with {ins}: {cost} wavefronts")
    opt = info.optimality
    if opt:
        proof, smt = opt.proof, opt.smt_synthesis
        lines.append(
            f"  optimality (Z3, every invertible linear layout x every instruction choice left open): "
            f"nothing cheaper than {opt.cost} wavefronts: {proof.status} in {proof.seconds:.2f} s"
            + (f" ({proof.reason})" if proof.reason else "")
        )
        extra = f", enumerated cost {smt.enumerated_cost}" if smt.enumerated_cost is not None else ""
        lines.append(
            f"  SMT synthesis without §5.4 (at most {opt.cost}): {smt.status} in {smt.seconds:.2f} s{extra}"
        )
    if r.constrained is not None:
        lines += constrained_lines(r.constrained)
    return "\n".join(lines) + "\n" + to_text(r)


def constrained_lines(c: ConstrainedSynthesis) -> list[str]:
    """The constrained synthesis: every layout the engines all take, its count, the optimum."""
    what = "plain and padded layouts" if c.padding_only else f"layouts {', '.join(c.engines)} all take"
    head = f"{what} ({len(c.members)}; the spec's accesses counted on each, "
    lines = [head + "each free access with its cheapest instruction):"]
    for i, m in enumerate(c.members):
        how = ("* " if i in c.pareto else "  ") + "; ".join(f"{e} {label}" for e, label in m.engines.items())
        used = ", ".join(ptx_name(x) for x in m.instructions.values()) if m.instructions else ""
        cost = f"{m.wavefronts} wavefronts with {used} ({m.verdict})" if m.wavefronts is not None else ""
        cost = cost or (
            f"refused: {m.reason}" if m.verdict == "refused" else f"{m.verdict}: {m.reason or 'not counted'}"
        )
        extra = ", ".join(f"{k} {v}" for k, v in (m.costs or {}).items() if k != "wavefronts")
        lines.append(f"  {how}: {cost}{'; ' + extra if extra else ''}  {m.layout}")
    lines += [f"  not taken: {why}" for why in c.refused]
    if c.empty:
        lines.append(f"  none: {c.empty}")
    if c.optimum is not None:
        how = "; ".join(f"{e} {label}" for e, label in c.optimum.engines.items())
        lines.append(f"  constrained optimum: {c.optimal_wavefronts} wavefronts with {how} "
                     f"({c.proof.status} by exhaustion over the {len(c.members)} layouts)")  # fmt: skip
    if c.pareto:
        front = f"{len(c.pareto)} layouts no other beats"
        lines.append("  * the Pareto front over wavefronts, instructions, operations (engine ops per tile), "
                     f"xor_terms, pad_terms (address XORs, paddings), shared_bytes: {front}")  # fmt: skip
    if c.chosen is not None:
        pick = c.members[c.chosen]
        weights = ", ".join(f"{k}={v:g}" for k, v in (c.weights or {}).items())
        lines.append(f"  picked by the weights ({weights}): "
                     + "; ".join(f"{e} {label}" for e, label in pick.engines.items()))  # fmt: skip
    if c.unconstrained_wavefronts is not None:
        cost = f"; the constraint costs {c.cost}" if c.cost is not None else ""
        out = f"; {', '.join(c.excluded_by)} cannot take it" if c.excluded_by else "; the engines take it"
        out = "" if c.padding_only else out  # the synthesized layout is a member
        lines.append(f"  unconstrained optimum: {c.unconstrained_wavefronts} wavefronts{out}{cost}")
    return lines


def convert_text(r: ConvertResult) -> str:
    """The shuffle plan (first rounds), the shared-memory round trip, each with its proof."""
    lines = [f"convert {r.source!r} -> {r.destination!r} ({'x'.join(map(str, r.shape))} {r.dtype})"]
    sh = r.shuffle
    if not sh.possible:
        lines.append(f"warp shuffles: not possible ({sh.reason})")
    else:
        lines += [
            f"warp shuffles (§5.4): V = {_n(sh.vectorization)}; I = {_n(sh.inter)}; "
            f"E = {_n(sh.e)}; F = {_n(sh.f)}",
            f"  G = {_n(sh.g)}; R = {_n(sh.r)}",
            f"  {len(sh.rounds)} round(s) x {sh.shuffles_per_round} shuffle(s), "
            f"{sh.elements_per_shuffle_lane} element(s) per lane per round",
        ]
        for i, rd in enumerate(sh.rounds[:4]):
            lines.append(
                f"  round {i}: lane t reads lane {list(rd.src[:8])}...; "
                f"sends A reg {list(rd.send_register[:8])}...; stores B reg {list(rd.recv_register[:8])}..."
            )
        if len(sh.rounds) > 4:
            lines.append(f"  ... {len(sh.rounds) - 4} more round(s) (--json lists all)")
        p = sh.proof
        lines.append(
            f"  proof: {p.status} by z3 in {p.seconds:.2f} s" + (f" ({p.reason})" if p.reason else "")
        )
    m = r.shared_memory
    p = m.proof
    lines.append(
        f"through shared memory ({m.memory} layout {m.formula}): every destination thread reads the element "
        f"it names: {p.status} by z3 in {p.seconds:.2f} s" + (f" ({p.reason})" if p.reason else "")
    )
    lines.append(f"verdict: {r.verdict} (exit {r.exit_code})")
    return "\n".join(lines) + "\n"


def _n(names) -> str:
    return " ".join(names) if names else "∅"


def gpu_text(r: GpuResult) -> str:
    """Data check and predicted vs measured wavefronts of a GPU run."""
    data = "correct" if r.wrong_elements == 0 else f"WRONG ({r.wrong_elements} elements)"
    lines = [f"{r.spec}: {r.runs} run(s), data {data}"]
    for name, side in (("store", r.store), ("load", r.load)):
        if side.measured is None:
            lines.append(
                f"  {name:5} {side.instr:6} predicted {side.predicted} wavefronts (no ncu: not measured)"
            )
        else:
            ok = "ok" if side.measured == side.predicted else "MISMATCH"
            lines.append(
                f"  {name:5} {side.instr:6} predicted {side.predicted:6} measured {side.measured:6} {ok}"
            )
    return "\n".join(lines) + "\n"
