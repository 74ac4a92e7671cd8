"""The bank scope drawn (seed 001): text (cells: lanes; ``!`` conflicts; red/green in color) and
SVG, from a :class:`~bankproof.verifier.results.ShowResult`."""

from __future__ import annotations

from bankproof.models import target
from bankproof.models.hardware import BANK_BYTES, BANKS
from bankproof.verifier.render.matrix import matrix_svg, matrix_text
from bankproof.verifier.render.safe import colour, escape
from bankproof.verifier.results import ShowResult


def _segments(banks: dict[int, dict[int, list[int]]], nbanks: int = BANKS) -> list[int]:
    """The rows of the grid (one word per bank each) one wavefront group touches."""
    return sorted({w // nbanks for words in banks.values() for w in words})


RED, GREEN, RESET = colour("41;97"), colour("42;30"), colour("0")


def to_text(r: ShowResult, color: bool = False) -> str:
    info, phases = _info(r), r.groups
    nb = r.banks
    segment = nb * BANK_BYTES
    unit, cost = target.units(r.model)
    lines = [
        f"{info['spec']}: access {info['access']!r} ({info['kind']}, {info['instr']}), instruction "
        f"{info['instruction']} of {info['instructions']}: {len(phases)} {unit} group(s)"
    ]
    if r.unknown:
        lines.append(f"wavefronts unknown here ({r.unknown}); the groups are the measured model's phases")
    for g, banks in enumerate(phases):
        segments = _segments(banks, nb)
        count = "?" if r.unknown else max(len(w) for w in banks.values())
        lines.append(f"group {g}: {count} {cost}(s)")
        lines.append("seg\\bank " + " ".join(f"{b:>3}" for b in range(nb)))
        for s in segments:
            cells = []
            for b in range(nb):
                lanes = banks.get(b, {}).get(s * nb + b, [])
                cell = f"{lanes[0]:>3}" if lanes else "  ."
                if color and lanes:
                    cell = f"{RED if len(banks[b]) > 1 else GREEN}{cell}{RESET}"
                cells.append(cell)
            lines.append(f"{s * segment:>8} " + " ".join(cells))
        hist = [len(banks.get(b, {})) for b in range(nb)]
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


def scope_svg(r: ShowResult, y: int = 0) -> tuple[list[str], int]:
    """SVG elements of the bank scope starting at height ``y``, and their height: one square per
    (segment, bank) cell, class ``scope``, red where the bank serves several words, green where
    it serves one, dark where nobody goes; the words per bank under each group."""
    info, phases = _info(r), r.groups
    nb = r.banks
    segment = nb * BANK_BYTES
    cell, pad = 22, 40
    title = f"{info['access']} ({info['instr']}) instruction {info['instruction']}"
    out = [f'<text x="4" y="{y + 14}" font-size="12">{escape(title)}</text>']
    for b in range(0, nb, 4):
        out.append(f'<text x="{pad + b * cell + 4}" y="{y + 30}">{b}</text>')
    y0, y = y, y + pad
    for g, banks in enumerate(phases):
        out.append(f'<text x="4" y="{y - 4}">group {g}</text>')
        for s in _segments(banks, nb):
            out.append(f'<text x="2" y="{y + 14}" font-size="8">{s * segment}</text>')
            for b in range(nb):
                lanes = banks.get(b, {}).get(s * nb + b, [])
                many = len(banks.get(b, {})) > 1
                fill = "#d33" if lanes and many else "#4a8" if lanes else "#222"
                x = pad + b * cell
                size = f'width="{cell - 2}" height="{cell - 2}"'
                out.append(f'<rect class="scope" x="{x}" y="{y}" {size} fill="{fill}"/>')
                if lanes:
                    out.append(f'<text x="{x + 3}" y="{y + 14}" fill="#fff">{lanes[0]}</text>')
            y += cell
        out.append(f'<text x="2" y="{y + 14}" font-size="8">words</text>')
        hist = [len(banks.get(b, {})) for b in range(nb)]
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


def to_svg(r: ShowResult, with_matrices: bool = True) -> str:
    """The bank scope, then (``with_matrices``) each matrix view below it, as one SVG picture."""
    matrices = r.matrices if with_matrices else ()
    body, height = scope_svg(r)
    width = 40 + r.banks * 22 + 10
    for m in matrices:
        part, w, h = matrix_svg(m, 4, height + 10)
        body += part
        height += h + 10
        width = max(width, 4 + w)
    head = f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 10}"'
    bg = f'<rect x="0" y="0" width="{width}" height="{height + 10}" fill="#fff"/>'
    return "\n".join([head + ' font-family="monospace" font-size="9">', bg, *body, "</svg>"]) + "\n"


def to_text_with_matrices(r: ShowResult, color: bool = False) -> str:
    """What ``bankproof show`` prints: the scope, then each matrix view."""
    return to_text(r, color) + "".join("\n" + matrix_text(m, color) for m in r.matrices)


def _info(r: ShowResult) -> dict:
    return {"access": r.access, "kind": r.kind, "instr": r.instr, "instruction": r.instruction,
            "instructions": r.instructions, "spec": r.spec}  # fmt: skip
