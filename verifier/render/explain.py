"""The §5.4 construction narrated step by step (seed 001 §04), from an
:class:`~bankproof.verifier.results.ExplainResult`.

>>> pretty("32*m + (n ^ (2*m))")
'32·m + (n ⊕ 2m)'
"""

from __future__ import annotations

import re

from bankproof.models import target
from bankproof.verifier.render.matrix import matrix_text
from bankproof.verifier.results import ExplainResult


def pretty(formula: str) -> str:
    """``32*m + (n ^ (2*m))`` -> ``32·m + (n ⊕ 2m)``, the seeds' notation."""
    out = formula.replace(" ^ ", " ⊕ ")
    out = re.sub(r"\((\d+)\*([A-Za-z_]\w*)\)", r"\1\2", out)
    return out.replace("*", "·")


def _n(names) -> str:
    return " ".join(names) if names else "∅"


def to_text(r: ExplainResult) -> str:
    spec, sets = r.problem, r.sets
    d, v, w = len(r.bits), len(r.vectorization), spec.elem_bits // 8
    vec_bytes = (1 << v) * w
    t = target.get(spec.arch)
    row = t.row_bytes  # the bytes one row of banks holds
    full = max(0, (row // vec_bytes).bit_length() - 1)
    cap = f" (at most d - v = {d - v})" if full > r.bank_bits else ""
    out = [
        f"bankproof explain: {'x'.join(map(str, spec.shape))} {spec.dtype}, "
        f"write layout A = {r.writer!r}, read layout B = {r.reader!r}",
        "",
        f"Bits: the tensor flattens with {spec.dims[-1]} minor, F2^{d} with basis {' '.join(r.bits)}.",
        f"  A ({r.writer_kind}): A_Reg = {_n(sets['A_Reg'])}  ·  A_Thr = {_n(sets['A_Thr'])}",
        f"  B ({r.reader_kind}): B_Reg = {_n(sets['B_Reg'])}  ·  B_Thr = {_n(sets['B_Thr'])}",
        "",
        f"Vectorization: V = basis of A_Reg ∩ B_Reg = {_n(r.vectorization)}, so v = {v}: each lane moves "
        f"2^{v}·{w} = {vec_bytes} bytes per instruction.",
        f"Space sizes: b = log2({row} / (2^v·w)) = log2({row}/{vec_bytes}) = {r.bank_bits} bank bits{cap}; "
        f"s = d - v - b = {d} - {v} - {r.bank_bits} = {r.segment_bits} segment bits.",
    ]
    if vec_bytes > 4:
        out.append(
            f"Transaction split: {vec_bytes} bytes per lane: lanes in different phases never conflict, "
            f"so the thread bits {_n(sets['split_A'])} (A) and {_n(sets['split_B'])} (B) are removed: "
            f"A_Bank = {_n(sets['A_Bank'])}, B_Bank = {_n(sets['B_Bank'])}."
        )
    else:
        out.append(
            f"Transaction split: 2^v·w = {vec_bytes} bytes: one phase of 32 lanes, nothing is removed: "
            "A_Bank = A_Thr, B_Bank = B_Thr."
        )
    if sets["sub_word"]:
        out.append(
            f"Sub-word bits: lanes move less than a bank, so the lowest {len(sets['sub_word'])} bank bit(s) "
            f"pick bytes within one 4-byte word; they take {_n(sets['sub_word'])} (lanes sharing a word do "
            "not conflict)."
        )
    out += [
        f"Shared vs unique: I = A_Bank ∩ B_Bank = {_n(sets['I'])}; "
        f"E = A_Bank ∖ B_Bank = {_n(sets['E'])}; F = B_Bank ∖ A_Bank = {_n(sets['F'])}.",
        f"Pair and XOR (ascending): H = {_n(sets['H'])}.",
        f"Complement: C = basis of the complement of span(V ∪ A_Bank ∪ B_Bank) = {_n(sets['C'])}.",
    ]
    h, c, s = len(sets["H"]), len(sets["C"]), r.segment_bits
    if h + c >= s:
        out.append(
            f"Segment bits: |H| + |C| = {h} + {c} = {h + c} ≥ s = {s}: "
            f"conflict-free for both accesses; S_Idx = {_n(sets['S_Idx'])}."
        )
    else:
        out.append(
            f"Segment bits: |H| + |C| = {h + c} < s = {s}: conflicts are unavoidable; "
            f"padded with {_n(sets['padding'])}: S_Idx = {_n(sets['S_Idx'])}."
        )
    out.append(f"Bank bits: complete to a basis of F2^{d}: S_Bank = {_n(sets['S_Bank'])}.")
    out += ["", matrix_text(r.matrix).rstrip("\n")]
    lo, hi = r.wavefronts_per_instruction["A"], r.wavefronts_per_instruction["B"]
    out += [
        "",
        f"Wavefronts per instruction: A {lo}, B {hi} (Lemma 9.4), the fewest any layout gives (Lemma 9.5).",
        f"Result: offset({', '.join(spec.dims)}) = {pretty(r.formula)}"
        if r.formula
        else "Result: see the bases above.",
    ]
    return "\n".join(out) + "\n"
