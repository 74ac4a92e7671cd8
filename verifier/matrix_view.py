"""The matrix view of a layout (seed 000): rows are the tensor's bits, columns are the layout's
input bits (offset bits of a memory layout; register, lane, warp and block bits of a distributed
one); a 1 in row ``m0`` and column ``l3`` says "flipping lane bit 3 flips m0". Composition is a
matrix product and conflicts are subspace intersections, so this is the picture the proofs read.

>>> from models.layout import LinearLayout
>>> mem = LinearLayout.from_bases({"offset": [[0, 1], [1, 1]]}, {"dim0": 2, "dim1": 2})
>>> print(matrix_text(memory_matrix(mem, ["m", "n"], 8)), end="")
memory layout: offset bits -> tensor bits (8-bit elements)
      word|
     o0 o1
  n0  1  1
  m0  .  1
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from bankproof.models.errors import log2
from bankproof.models.hardware import BANK_BYTES, BANKS
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout
from bankproof.models.swizzle import Space

BOLD_GREEN, RESET = "\033[1;32m", "\033[0m"


@dataclass(frozen=True)
class Matrix:
    """A 0/1 matrix with named rows (tensor bits) and named column groups (input bits)."""

    title: str
    rows: tuple[str, ...]
    groups: tuple[tuple[str, tuple[str, ...]], ...]  # (group name, column labels)
    columns: tuple[int, ...]  # packed tensor-bit vector of each column, in group order

    def cell(self, row: int, col: int) -> int:
        return (self.columns[col] >> row) & 1


def _columns(layout: LinearLayout, space: Space, in_dim: str) -> list[int]:
    return [space.pack(b) for b in layout.in_bases(in_dim)]


def memory_matrix(
    memory: LinearLayout | PaddedLayout,
    dims: Sequence[str],
    elem_bits: int,
    roles: Sequence[tuple[str, int]] = (),
) -> Matrix:
    """Offset bits ``o0, o1, ...`` -> tensor bits, the offset bits grouped by what they select
    in a shared memory of 4-byte banks: a byte within a word, the bank, the 128-byte segment;
    or by ``roles``, ``(name, how many bits)`` from the lowest offset bit up."""
    padded = isinstance(memory, PaddedLayout)
    lin = memory.linear if padded else memory
    space = Space.of(lin, dims)
    cols = _columns(lin, space, "offset")
    if not roles:  # what each offset bit selects in the byte address
        shift = log2(elem_bits) - 3  # log2 of the element's bytes; negative for sub-byte elements
        word_bits, segment_bit = log2(BANK_BYTES), log2(BANK_BYTES * BANKS)
        count = {"word": 0, "bank": 0, "segment": 0}
        for i in range(len(cols)):
            byte_bit = i + shift
            count["word" if byte_bit < word_bits else "bank" if byte_bit < segment_bit else "segment"] += 1
        roles = list(count.items())
    assert sum(n for _, n in roles) == len(cols), "roles must cover every offset bit"
    starts = [sum(n for _, n in roles[:i]) for i in range(len(roles))]
    groups = tuple(
        (name, tuple(f"o{i}" for i in range(s, s + n))) for (name, n), s in zip(roles, starts) if n
    )
    title = f"memory layout: offset bits -> tensor bits ({elem_bits}-bit elements)"
    if padded:
        title += "; padding is not linear and not shown"
    return Matrix(title, space.names, groups, tuple(cols))


def access_matrix(layout: LinearLayout, dims: Sequence[str], name: str) -> Matrix:
    """Register/lane/warp/block bits -> tensor bits of an access's distributed layout."""
    space = Space.of(layout, dims)
    groups, cols = [], []
    for in_dim in layout.in_dim_names:
        c = _columns(layout, space, in_dim)
        if c:
            groups.append((in_dim, tuple(f"{in_dim[0]}{i}" for i in range(len(c)))))
            cols += c
    title = f"access {name!r}: register/lane/warp bits -> tensor bits"
    return Matrix(title, space.names, tuple(groups), tuple(cols))


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
