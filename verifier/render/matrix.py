"""Matrix views drawn: text (``1`` / ``.``, columns grouped by ``|``), SVG and HTML.

>>> from bankproof.models.layout import LinearLayout
>>> from bankproof.verifier.engine.matrices import memory_matrix
>>> mem = LinearLayout.from_bases({"offset": [[0, 1], [1, 1]]}, {"dim0": 2, "dim1": 2})
>>> print(matrix_text(memory_matrix(mem, ["m", "n"], 8)), end="")
memory layout: offset bits -> tensor bits (8-bit elements)
      word|
     o0 o1
  n0  1  1
  m0  .  1
"""

from __future__ import annotations

from bankproof.verifier.engine.matrices import Matrix
from bankproof.verifier.render.safe import colour, escape

BOLD_GREEN, RESET = colour("1;32"), colour("0")


def matrix_text(m: Matrix, color: bool = False) -> str:
    """Columns grouped by ``|``; ones printed as ``1``, zeros as ``.``."""
    widths = [
        max(3, *(len(label) + 1 for label in labels), -(-len(name) // len(labels)))
        for name, labels in m.groups
    ]
    head_names, head_labels = [], []
    for (name, labels), width in zip(m.groups, widths):
        head_names.append(name.rjust(width * len(labels)))
        head_labels.append("".join(label.rjust(width) for label in labels))
    pad = max(len(r) for r in m.rows) + 2
    lines = [m.title, " " * pad + "|".join(head_names) + "|", " " * pad + "|".join(head_labels)]
    for r, name in enumerate(m.rows):
        parts, col = [], 0
        for (_, labels), width in zip(m.groups, widths):
            cells = []
            for _ in labels:
                one = m.cell(r, col)
                cell = ("1" if one else ".").rjust(width)
                cells.append(f"{BOLD_GREEN}{cell}{RESET}" if one and color else cell)
                col += 1
            parts.append("".join(cells))
        lines.append(f"  {name:<{pad - 2}}" + "|".join(parts))
    return "\n".join(lines) + "\n"


def matrix_svg(m: Matrix, x: int, y: int, cell: int = 18) -> tuple[list[str], int, int]:
    """SVG elements drawing the matrix with its top-left corner at (x, y), their width and
    their height."""
    label_w = 8 * max(len(r) for r in m.rows) + 8
    out = [f'<text x="{x}" y="{y + 12}" font-size="12">{escape(m.title)}</text>']
    top = y + 20
    col = 0
    for name, labels in m.groups:
        gx = x + label_w + col * cell
        out.append(f'<text x="{gx}" y="{top + 10}">{escape(name)}</text>')
        for i, label in enumerate(labels):
            out.append(f'<text x="{gx + i * cell + 2}" y="{top + 24}">{escape(label)}</text>')
        col += len(labels)
    grid = top + 30
    for r, name in enumerate(m.rows):
        ry = grid + r * cell
        out.append(f'<text x="{x}" y="{ry + 13}">{escape(name)}</text>')
        col = 0
        for g, (_, labels) in enumerate(m.groups):
            for _ in labels:
                cx = x + label_w + col * cell
                one = m.cell(r, col)
                fill = "#2a6" if one else ("#eee" if g % 2 == 0 else "#ddd")
                size = f'width="{cell - 2}" height="{cell - 2}"'
                out.append(f'<rect class="matrix" x="{cx}" y="{ry}" {size} fill="{fill}"/>')
                col += 1
    return out, label_w + len(m.columns) * cell + 16, grid + len(m.rows) * cell - y + 10


def matrix_html(m: Matrix) -> str:
    """An HTML table of the matrix (ones shaded), for the report."""
    head = "".join(f'<th colspan="{len(labels)}">{escape(name)}</th>' for name, labels in m.groups)
    labels = "".join(f"<th>{escape(lab)}</th>" for _, labs in m.groups for lab in labs)
    body = []
    for r, name in enumerate(m.rows):
        cells = "".join(
            '<td class="one">1</td>' if m.cell(r, c) else "<td>·</td>" for c in range(len(m.columns))
        )
        body.append(f"<tr><th>{escape(name)}</th>{cells}</tr>")
    return (
        f'<table class="matrix"><caption>{escape(m.title)}</caption>'
        f"<tr><th></th>{head}</tr><tr><th></th>{labels}</tr>{''.join(body)}</table>"
    )
