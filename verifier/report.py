"""Reports for people (text) and machines (JSON), and the exit code of a verdict."""

from __future__ import annotations

import json

EXIT = {"proved": 0, "refuted": 1, "unknown": 3, "disagree": 4}


def exit_code(verdict: str) -> int:
    return EXIT[verdict]


def to_json(report: dict) -> str:
    return json.dumps(report) + "\n"


def conflict_state(access: dict) -> str:
    """``conflict-free`` or ``N-way conflict`` for an access the engines decided."""
    if access["conflict_free"]:
        return "conflict-free"
    per = access["ideal_wavefronts"] // max(1, access["instructions"])
    return f"{access['max_wavefronts_per_instruction'] // max(1, per)}-way conflict"


def to_text(report: dict) -> str:
    shape = "x".join(map(str, report["shape"]))
    mem = report["memory"]
    where = f"{shape} {report['dtype']} on {report['arch']}"
    lines = [f"{report['spec']}: {where}, memory {mem['notation']} {mem['text']}"]
    width = max(len(a["name"]) for a in report["accesses"])
    for a in report["accesses"]:
        status = a["proof"]["status"]
        if status == "disagree":
            detail = ", ".join(f"{e} {r['verdict']} {r['wavefronts']}" for e, r in a["engines"].items())
            state = f"ENGINES DISAGREE ({detail}): please report this spec"
            cost = f"{a['ideal_wavefronts']} ideal wavefronts"
        elif status == "unknown":
            state = f"unknown ({a['proof'].get('reason', '')})"
            cost = f"? wavefronts (ideal {a['ideal_wavefronts']})"
        else:
            worst = a["max_wavefronts_per_instruction"]
            state = conflict_state(a)
            cost = f"{a['wavefronts']} wavefronts (ideal {a['ideal_wavefronts']}, max {worst}/instruction)"
        lines.append(
            f"  {a['name']:<{width}}  {a['kind']:<5} {a['instructions']} x {a['instr']:<22} {cost}  {state}  "
            f"[{status} by {a['proof']['engine']}]"
        )
        cx = a["counterexample"]
        if cx:
            l0, l1 = cx["lanes"]
            where = f"warp {cx['warp']}, instruction {cx['instruction']} (register {cx['register']})"
            lines.append(
                f"    counterexample: lanes {l0} and {l1} of {where}, phase {cx['phase']}: "
                f"same bank {cx['bank']}, different words"
            )
            for lane, coords, addr in zip(cx["lanes"], cx["coords"], cx["byte_addresses"]):
                where = ", ".join(f"{k}={v}" for k, v in coords.items())
                lines.append(
                    f"      lane {lane:>2}: ({where})  byte {addr}  bank {cx['bank']}  word {addr // 4}"
                )
            lines.append(f"    reproduce: echo '{cx['reproducer']}' | bankproof wavefronts --input -")
        why = a["engines"].get("algebra", {}).get("conflict_directions")
        if why:
            by = why[0] if len(why) == 1 else f"any sum of {', '.join(why)}"
            lines.append(
                f"    why (Lemma 9.4): lanes whose elements differ by {by} hit the same bank in another "
                f"segment: 2^{len(why)} words per bank"
            )
        if a["hardware_model"] == "assumed":
            lines.append(f"    note: hardware model measured on sm90 only; {report['arch']} assumed the same")
    lines.append(f"verdict: {report['verdict']} (exit {exit_code(report['verdict'])})")
    return "\n".join(lines) + "\n"
