"""The second engine for a kernel's instruction: where its byte addresses are F2-affine in the bits
of the lane, the warp and the execution (``a(l, w, e) = a0 ^ XOR of one image per set bit``, every
warp and execution present with all lanes on), the instruction is a layout: lane and warp bits, and
the execution bits as registers, onto element offsets. ``bankproof verify``'s engines then decide
it from the bases (Lemma 9.4 and a Z3 proof over every lane, warp and iteration, not only the ones
this launch ran), give the bad directions as byte-address bits, and must agree with the count of
the enumerated instances (XOR with ``a0`` permutes banks, so it changes no count).

>>> import numpy as np
>>> lanes = np.arange(32)
>>> offs = np.stack([lanes * 128 + 4 * e for e in range(2)])       # two executions of one warp
>>> bases(offs, np.array([0, 0]), np.array([0, 1]))
(0, {'lane': [128, 256, 512, 1024, 2048], 'warp': [], 'register': [4]})
"""

from __future__ import annotations

import numpy as np
from bankproof.models.errors import InputError
from bankproof.models.layout import LinearLayout
from bankproof.verifier.engine.answer import AccessProblem, answer
from bankproof.verifier.engine.engines import ENGINES
from bankproof.verifier.engine.spec_checks import check_access_layout

VECTOR = {4: "ld.shared.b32", 8: "ld.shared.v2.b32", 16: "ld.shared.v4.b32"}
WHERE = "<kernel instruction>"


def _log2(n: int) -> int | None:
    return n.bit_length() - 1 if n > 0 and n & (n - 1) == 0 else None


def bases(offsets: np.ndarray, warp: np.ndarray, execution: np.ndarray) -> tuple[int, dict] | None:
    """``(a0, {"lane", "warp", "register": byte images})`` when the rows (one per warp and execution,
    32 lanes each) are F2-affine in the lane, warp and execution bits over a full grid, else ``None``."""
    ws, es = sorted(set(warp.tolist())), sorted(set(execution.tolist()))
    nw, ne = _log2(len(ws)), _log2(len(es))
    if nw is None or ne is None or ws != list(range(len(ws))) or es != list(range(len(es))):
        return None
    if len(offsets) != len(ws) * len(es):
        return None
    grid = np.zeros((len(ws), len(es), 32), dtype=np.int64)
    grid[warp, execution] = offsets
    a0 = int(grid[0, 0, 0])
    x = grid ^ a0
    imgs = {
        "lane": [int(x[0, 0, 1 << i]) for i in range(5)],
        "warp": [int(x[1 << i, 0, 0]) for i in range(nw)],
        "register": [int(x[0, 1 << i, 0]) for i in range(ne)],
    }
    pred = np.zeros_like(x)
    lane = np.arange(32)
    for i, b in enumerate(imgs["lane"]):
        pred ^= np.where((lane >> i) & 1, b, 0)[None, None, :]
    for i, b in enumerate(imgs["warp"]):
        pred ^= np.where((np.arange(len(ws)) >> i) & 1, b, 0)[:, None, None]
    for i, b in enumerate(imgs["register"]):
        pred ^= np.where((np.arange(len(es)) >> i) & 1, b, 0)[None, :, None]
    return (a0, imgs) if np.array_equal(pred, x) else None


def verify_instruction(
    kind: str, width: int, imgs: dict, timeout: float = 5.0, engines: tuple[str, ...] = ENGINES
) -> tuple | None:
    """The instruction's layout as an access problem, answered by every engine: ``kind``
    ``load``/``store`` of ``width`` bytes per lane (1 to 16), byte images per input bit. Returns
    ``(answer, element bytes)``, or ``None`` where the images do not make a layout (not multiples of
    the element, not injective)."""
    elem = min(width, 4)
    vec = width // elem
    if any(b % elem for b in sum(imgs.values(), [])):
        return None
    to = {k: [[b // elem] for b in v] for k, v in imgs.items()}
    to["register"] = [[1 << i] for i in range(_log2(vec) or 0)] + to["register"]
    span = max([1] + [b[0] for v in to.values() for b in v])
    size = 1 << max(1, (2 * span - 1).bit_length())
    name = (VECTOR[width] if width >= 4 else f"ld.shared.u{8 * width}").replace(
        "ld.", "st." if kind == "store" else "ld."
    )
    try:
        layout = check_access_layout(LinearLayout.from_bases(to, {"i": size}), kind, WHERE, ["i"])
        p = AccessProblem(LinearLayout.identity1d(size, "offset", "i"), layout, 8 * elem, kind, instr=name)
        return answer(p, engines, timeout), elem
    except InputError:
        return None


def directions(names: tuple[str, ...] | None, elem: int) -> str | None:
    """Lemma 9.4's conflict directions (element-offset bits ``i5``) as byte-address bits."""
    if not names:
        return None
    bits = sorted(int(n[1:]) + (elem.bit_length() - 1) for n in names if n[1:].isdigit())
    return "byte-address bit" + "s" * (len(bits) > 1) + " " + ", ".join(f"{b} ({1 << b})" for b in bits)
