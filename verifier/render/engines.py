"""Text of ``bankproof agree`` results.

>>> from bankproof.verifier.api.agree import agree
>>> r = agree({"tma": "64B", "box": [8, 32]}, {"tma": "64B", "box": [8, 32]}, dtype="f16", base=512)
>>> print(agree_text(r).splitlines()[-1])
verdict: proved (exit 0)
"""

from __future__ import annotations

from bankproof.verifier.results import AgreeResult


def agree_text(r: AgreeResult) -> str:
    cute = f"  [{r.writer_cute}]" if r.writer_cute else ""
    lines = [f"{r.spec}: at base {r.base}", f"  writer: {r.writer}{cute}", f"  reader: {r.reader}"]
    if r.enumeration.mismatches:
        state = f"{r.enumeration.mismatches} of {r.elements} elements read from another byte than written"
    else:
        state = f"all {r.elements} elements read where they were written"
    lines.append(f"  {state}  [enumeration {r.enumeration.status}; z3 {r.proof.status}"
                 f"{', ' + r.proof.reason if r.proof.reason else ''}]")  # fmt: skip
    f = r.first_mismatch
    if f is not None:
        where = (
            f"written at byte {f.writer_address}"
            if f.writer_address is not None
            else "not written by the writer"
        )
        got = f", which holds element {tuple(f.reads_element)}" if f.reads_element else ""
        lines.append(
            f"  first mismatch: element (row {f.row}, col {f.col}) {where}, "
            f"read from byte {f.reader_address}{got}"
        )
    if not r.agreeing_offsets:
        lines.append("  they disagree at every base")
    elif r.smallest_alignment is None:
        offs = ", ".join(map(str, r.agreeing_offsets[:8])) + (", ..." if len(r.agreeing_offsets) > 8 else "")
        lines.append(f"  they agree only at bases {offs} bytes past a {r.period}-byte boundary")
    else:
        lines.append(
            f"  they agree at every base aligned to {r.smallest_alignment} bytes "
            "(the smallest such alignment)"
        )
    lines += [f"  note: {n}" for n in r.notes]
    lines.append(f"verdict: {r.verdict} (exit {r.exit_code})")
    return "\n".join(lines)


__all__ = ["agree_text"]
