"""``bankproof show SPEC [--access NAME] [--instruction N] [--svg FILE] [--color WHEN]``: the bank
scope of one instruction (seed 001): for each wavefront group, a grid whose rows are the 128-byte
segments the lanes touch and whose columns are the 32 banks, each cell labeled with the lane that
reads or writes it, then the hits per bank. A bank with two or more different words in one group
is a conflict (marked ``!``, red in color); a bank nobody touches is dark (``.``). Then the matrix
views (seed 000) of the memory layout and of the access's layout.
"""

from __future__ import annotations

import argparse
import sys
from html import escape

import numpy as np
from bankproof.models.access import build_access
from bankproof.models.errors import InputError
from bankproof.models.hardware import BANKS, evaluate, phase_ids
from bankproof.verifier.matrix_view import access_matrix, matrix_svg, matrix_text, memory_matrix
from bankproof.verifier.spec import Spec, load_spec

SEGMENT = 128  # bytes: one row of the 32 four-byte banks


def lane_words(ins, addr: int) -> list[int]:
    """The 4-byte words one lane's address covers (16 bytes for an ldmatrix row address)."""
    width = 16 if ins.is_matrix else ins.width
    return list(range(addr // 4, (addr + max(width, 1) - 1) // 4 + 1))


def groups(spec: Spec, access: str | None, instruction: int | None) -> tuple[dict, list[dict]]:
    """The chosen access and, per wavefront group, ``{bank: {word: [lanes]}}``; instruction
    ``None`` picks the first of the costliest (relative to its ideal) instructions."""
    accs = spec.accesses
    if access is not None:
        accs = [a for a in accs if a.name == access]
        if not accs:
            names = ", ".join(a.name for a in spec.accesses)
            raise InputError("show", "--access", f"names no access of the spec ({names})", access)
    acc = accs[0]
    a = build_access(acc.layout, spec.memory, spec.elem_bits, acc.kind, acc.instr)
    if instruction is None:
        counts, ideals, _ = evaluate(a.instr, a.addresses)
        instruction = int(np.argmax(counts / np.maximum(ideals, 1)))
    if not 0 <= instruction < len(a.addresses):
        raise InputError("show", "--instruction", f"must be in [0, {len(a.addresses)})", instruction)
    offs = a.addresses[instruction]
    active = offs >= 0
    phases = phase_ids(a.instr, offs[None, :], active[None, :])[0]
    out = []
    for p in sorted(set(phases[active].tolist())):
        banks: dict[int, dict[int, list[int]]] = {}
        for lane in np.flatnonzero(active & (phases == p)).tolist():
            for w in lane_words(a.instr, int(offs[lane])):
                banks.setdefault(w % BANKS, {}).setdefault(w, []).append(lane)
        out.append(banks)
    info = {"access": acc.name, "kind": acc.kind, "instr": a.instr.short, "instruction": instruction,
            "instructions": len(a.addresses), "spec": spec.path}  # fmt: skip
    return info, out


def _segments(banks: dict[int, dict[int, list[int]]]) -> list[int]:
    """The 128-byte segments (rows of the grid) one wavefront group touches."""
    return sorted({w // BANKS for words in banks.values() for w in words})


RED, GREEN, RESET = "\033[41;97m", "\033[42;30m", "\033[0m"


def to_text(info: dict, phases: list[dict], color: bool = False) -> str:
    lines = [
        f"{info['spec']}: access {info['access']!r} ({info['kind']}, {info['instr']}), instruction "
        f"{info['instruction']} of {info['instructions']}: {len(phases)} wavefront group(s)"
    ]
    for g, banks in enumerate(phases):
        segments = _segments(banks)
        lines.append(f"group {g}: {max(len(w) for w in banks.values())} wavefront(s)")
        lines.append("seg\\bank " + " ".join(f"{b:>3}" for b in range(BANKS)))
        for s in segments:
            cells = []
            for b in range(BANKS):
                lanes = banks.get(b, {}).get(s * BANKS + b, [])
                cell = f"{lanes[0]:>3}" if lanes else "  ."
                if color and lanes:
                    cell = f"{RED if len(banks[b]) > 1 else GREEN}{cell}{RESET}"
                cells.append(cell)
            lines.append(f"{s * SEGMENT:>8} " + " ".join(cells))
        hist = [len(banks.get(b, {})) for b in range(BANKS)]
        lines.append("words    " + " ".join(f"{h:>3}" if h else "  ." for h in hist))
        for level in range(max(hist), 0, -1):  # the same counts as a histogram, one row per level
            bars = [(" ██" if h >= level else "   ") for h in hist]
            if color:
                bars = [
                    f"{RED if h > 1 else GREEN}{b}{RESET}" if h >= level else b for b, h in zip(bars, hist)
                ]
            lines.append(f"{level:>8} " + " ".join(bars))
        marks = ["  !" if h > 1 else "   " for h in hist]
        lines.append("conflict " + " ".join(marks))
        dark = sum(1 for h in hist if h == 0)
        worst = max(hist)
        lines.append(
            f"  {sum(1 for h in hist if h > 1)} banks with {worst} different words, {dark} banks dark"
            if worst > 1
            else f"  conflict-free: every bank serves one word, {dark} banks dark"
        )
    return "\n".join(lines) + "\n"


def scope_svg(info: dict, phases: list[dict], y: int = 0) -> tuple[list[str], int]:
    """SVG elements of the bank scope starting at height ``y``, and their height: one square per
    (segment, bank) cell, class ``scope``, red where the bank serves several words, green where
    it serves one, dark where nobody goes; the words per bank under each group."""
    cell, pad = 22, 40
    title = f"{info['access']} ({info['instr']}) instruction {info['instruction']}"
    out = [f'<text x="4" y="{y + 14}" font-size="12">{escape(title)}</text>']
    for b in range(0, BANKS, 4):
        out.append(f'<text x="{pad + b * cell + 4}" y="{y + 30}">{b}</text>')
    y0, y = y, y + pad
    for g, banks in enumerate(phases):
        out.append(f'<text x="4" y="{y - 4}">group {g}</text>')
        for s in _segments(banks):
            out.append(f'<text x="2" y="{y + 14}" font-size="8">{s * SEGMENT}</text>')
            for b in range(BANKS):
                lanes = banks.get(b, {}).get(s * BANKS + b, [])
                many = len(banks.get(b, {})) > 1
                fill = "#d33" if lanes and many else "#4a8" if lanes else "#222"
                x = pad + b * cell
                size = f'width="{cell - 2}" height="{cell - 2}"'
                out.append(f'<rect class="scope" x="{x}" y="{y}" {size} fill="{fill}"/>')
                if lanes:
                    out.append(f'<text x="{x + 3}" y="{y + 14}" fill="#fff">{lanes[0]}</text>')
            y += cell
        out.append(f'<text x="2" y="{y + 14}" font-size="8">words</text>')
        hist = [len(banks.get(b, {})) for b in range(BANKS)]
        for b, h in enumerate(hist):
            out.append(f'<text x="{pad + b * cell + 6}" y="{y + 14}">{h or "."}</text>')
        y += cell
        top = max(hist)
        for b, h in enumerate(hist):  # bars: words per bank, the tallest cell-high
            if h:
                bar = (cell - 4) * h // top
                fill = "#d33" if h > 1 else "#4a8"
                out.append(
                    f'<rect class="bar" x="{pad + b * cell}" y="{y + cell - 4 - bar}" width="{cell - 2}" '
                    f'height="{bar}" fill="{fill}"/>'
                )
        y += 2 * cell
    return out, y - y0


SVG_WIDTH = 40 + BANKS * 22 + 10


def to_svg(info: dict, phases: list[dict], matrices: list = ()) -> str:
    """The bank scope, then each matrix view below it, as one SVG picture."""
    body, height = scope_svg(info, phases)
    width = SVG_WIDTH
    for m in matrices:
        part, w, h = matrix_svg(m, 4, height + 10)
        body += part
        height += h + 10
        width = max(width, 4 + w)
    head = f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 10}"'
    bg = f'<rect x="0" y="0" width="{width}" height="{height + 10}" fill="#fff"/>'
    return "\n".join([head + ' font-family="monospace" font-size="9">', bg, *body, "</svg>"]) + "\n"


def matrices(spec: Spec, access: str) -> list:
    """The matrix views of the spec's memory layout and of the named access's layout."""
    acc = next(a for a in spec.accesses if a.name == access)
    mem = memory_matrix(spec.memory, spec.dims, spec.elem_bits)
    return [mem, access_matrix(acc.layout, spec.dims, access)]


def run(args: argparse.Namespace) -> int:
    spec = load_spec(args.spec)
    info, phases = groups(spec, args.access, args.instruction)
    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    views = matrices(spec, info["access"])
    sys.stdout.write(to_text(info, phases, color))
    for m in views:
        sys.stdout.write("\n" + matrix_text(m, color))
    if args.svg:
        try:
            with open(args.svg, "w") as fh:
                fh.write(to_svg(info, phases, views))
        except OSError as e:
            raise InputError("show", "--svg", f"cannot be written ({e.strerror})", args.svg) from None
    return 0
