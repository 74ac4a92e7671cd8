"""``bankproof verify --html``: the page's content, and the page and the ``show`` SVG as rendered
by real headless Chromium (screenshots decoded and their pixels counted)."""

from __future__ import annotations

import re
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from bankproof.verifier.cli.main import main
from bankproof.verifier.engine.check import verify
from bankproof.verifier.engine.scope import page_data
from bankproof.verifier.engine.spec import AccessSpec, Spec
from bankproof.verifier.render.html import to_html
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import browser
from tests.strategies import distributed, memory, shapes

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CONFLICT_RED, PROVED_GREEN, REFUTED_RED, UNUSED = "#d33", "#2a7d46", "#c62828", "#222"


def _verify_html(tmp_path: Path, name: str) -> tuple[int, Path]:
    page = tmp_path / f"{name}.html"
    return main(["verify", str(EXAMPLES / f"{name}.toml"), "--html", str(page)]), page


def _text(html: str) -> str:
    """The page's visible words: tags dropped, whitespace collapsed."""
    body = html.split("<body>", 1)[1]
    return " ".join(re.sub(r"<[^>]+>", " ", body).split())


def test_page_content_is_self_contained(tmp_path, capsys):
    code, page = _verify_html(tmp_path, "transpose_16x32_xor_m")
    assert code == 1
    assert "verdict: refuted (exit 1)" in capsys.readouterr().out  # the text report still prints
    html = page.read_text()
    # nothing fetched, nothing run: no scripts, links, images or URLs but the SVG namespace
    assert not re.search(r"<script|<link|<img|src=|@import", html)
    assert set(re.findall(r"https?://[^\"' ]+", html)) == {"http://www.w3.org/2000/svg"}
    assert html.count("<svg") == 2  # one bank map per access
    assert html.count('class="scope"') == 16 * 32 + 1 * 32 + 2  # read: 16 segment rows; store: 1
    assert "lanes 1 and 16 of warp 0, instruction 0 (register 0), phase 0 hit bank 1" in html
    assert "m=1, n=0" in html and "m=0, n=1" in html
    assert html.count('<td class="one">1</td>') == 9 + 9 + 13  # store, read, memory matrices
    assert "Result: offset(m, n) = 32·m + (n ⊕ 2m)" in html  # the §5.4 narrative
    # and the constructed layout, ready to paste
    assert "#ttg.swizzled_shared&lt;{vec = 2, perPhase = 1, maxPhase = 16, order = [1, 0]}&gt;" in html
    assert "2-way conflict" in html


def test_html_unwritable_is_input_error(tmp_path, capsys):
    spec = str(EXAMPLES / "transpose_16x32_xor_2m.toml")
    assert main(["verify", spec, "--html", str(tmp_path / "no" / "such" / "dir.html")]) == 2
    assert "verify: --html cannot be written (no such writable folder)" in capsys.readouterr().err
    assert main(["verify", spec, "--html", str(tmp_path)]) == 2
    assert f"verify: --html is a folder, not a file, got {tmp_path}" in capsys.readouterr().err


@pytest.mark.browser
def test_html_renders_in_chromium(tmp_path):
    """The refuted transpose: badges of both verdicts and the 32 red conflict cells are on screen,
    and Chromium's DOM carries the verdicts."""
    code, page = _verify_html(tmp_path, "transpose_16x32_xor_m")
    assert code == 1
    img = browser.screenshot(page, tmp_path / "page.png", 1100, 2400)
    assert img.shape[:2] == (2400, 1100)
    white = browser.pixels(img, "#fff")
    assert white < 0.97 * img.shape[0] * img.shape[1]  # not blank
    assert len(np.unique(img.reshape(-1, img.shape[-1]), axis=0)) > 50
    assert browser.pixels(img, CONFLICT_RED) > 32 * 250  # 32 cells of 20x20, minus the lane labels
    assert browser.pixels(img, REFUTED_RED) > 1000 and browser.pixels(img, PROVED_GREEN) > 1000
    text = _text(browser.dom(page))
    assert "Verdict: refuted (exit 1)" in text
    assert "store store 16 × st.shared.b32 16 16 conflict-free proved by z3" in text
    assert "read load 16 × ld.shared.b32 32 16 2-way conflict refuted by z3" in text
    assert "lanes 1 and 16" in text


@pytest.mark.slow
def test_conflict_free_page_has_no_red(tmp_path):
    code, page = _verify_html(tmp_path, "transpose_16x32_xor_2m")
    assert code == 0
    img = browser.screenshot(page, tmp_path / "page.png", 1100, 2400)
    assert browser.pixels(img, CONFLICT_RED) == 0 and browser.pixels(img, REFUTED_RED) == 0
    assert browser.pixels(img, PROVED_GREEN) > 2000
    assert "Verdict: proved (exit 0)" in _text(browser.dom(page))


@pytest.mark.slow
def test_show_svg_opens_as_a_picture(tmp_path):
    """``show --svg``: Chromium draws the 32 red cells of seed 001's 2-way conflict and the
    dark unused banks."""
    svg = tmp_path / "scope.svg"
    assert (
        main(["show", str(EXAMPLES / "transpose_16x32_xor_m.toml"), "--access", "read", "--svg", str(svg)])
        == 0
    )
    img = browser.screenshot(svg, tmp_path / "scope.png", 800, 1300)
    assert browser.pixels(img, CONFLICT_RED) > 32 * 250
    assert browser.pixels(img, UNUSED) > 16 * 16 * 300


def _encode_png(img: np.ndarray, filters: list[int]) -> bytes:
    """A PNG whose row y uses filter ``filters[y]`` (the encoder side, to check the decoder)."""
    h, w, ch = img.shape
    rows, prev = [], np.zeros(w * ch, dtype=np.int64)
    for y in range(h):
        cur = img[y].reshape(-1).astype(np.int64)
        left = np.concatenate([np.zeros(ch, dtype=np.int64), cur[:-ch]])
        upleft = np.concatenate([np.zeros(ch, dtype=np.int64), prev[:-ch]])
        f = filters[y]
        if f == 0:
            pred = np.zeros_like(cur)
        elif f == 1:
            pred = left
        elif f == 2:
            pred = prev
        elif f == 3:
            pred = (left + prev) >> 1
        else:
            pa, pb, pc = abs(prev - upleft), abs(left - upleft), abs(left + prev - 2 * upleft)
            pred = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, prev, upleft))
        rows.append(bytes([f]) + ((cur - pred) & 255).astype(np.uint8).tobytes())
        prev = cur

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ctype = {1: 0, 2: 4, 3: 2, 4: 6}[ch]
    head = struct.pack(">IIBBBBB", w, h, 8, ctype, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", head)
        + chunk(b"IDAT", zlib.compress(b"".join(rows)))
        + chunk(b"IEND", b"")
    )


@pytest.mark.parametrize("channels", [1, 3, 4])
def test_png_decoder_round_trips_every_filter(channels):
    rng = np.random.default_rng(channels)
    img = rng.integers(0, 256, size=(10, 7, channels), dtype=np.uint8)
    img[3:6] = 200  # flat rows, where the predictors differ most from noise
    data = _encode_png(img, [y % 5 for y in range(10)])
    assert np.array_equal(browser.decode_png(data), img)
    assert browser.pixels(np.full((2, 2, 3), 0xDD, dtype=np.uint8), "#ddd") == 4


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_page_for_random_layouts(data):
    """Any spec verify accepts gets a page: random shapes, element widths, memory layouts and
    writer/reader layouts (with warps and broadcast); one bank map per access, the verdict in the
    title, the §5.4 section present."""
    shape = data.draw(shapes(max_bits=10))
    dtype, bits = data.draw(st.sampled_from([("f32", 32), ("f16", 16), ("i8", 8)]))
    accs = [
        AccessSpec("w", "store", "auto", data.draw(distributed(shape)), ""),
        AccessSpec("r", "load", "auto", data.draw(distributed(shape)), ""),
    ]
    dims = [f"d{i}" for i in range(len(shape))]
    spec = Spec("<random>", shape, dtype, bits, "sm90", dims, data.draw(memory(shape)), "bases", "", accs)
    rep = verify(spec, ("enumeration", "algebra"), 5.0)
    page = to_html(rep, page_data(spec, rep))
    assert page.count("<svg") == 2 and f"{rep.verdict}</title>" in page
    assert "The §5.4 construction for this writer and reader" in page
