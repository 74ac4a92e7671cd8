"""Headless Chromium for the report tests: render a local file to a PNG screenshot or to its DOM,
and decode the PNG (zlib + the five PNG row filters, no imaging library).

Chromium is Debian's ``chromium`` package, installed by ``make test``. Tests that need it skip
when it is missing, unless ``BANKPROOF_REQUIRE_BROWSER=1`` (set by ``make test``) makes that a
failure.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

import numpy as np
import pytest

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


def chromium() -> str:
    """The browser's path; skips the test (or fails it under ``BANKPROOF_REQUIRE_BROWSER=1``)."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        if os.environ.get("BANKPROOF_REQUIRE_BROWSER") == "1":
            pytest.fail("chromium is not installed (make test installs Debian's chromium package)")
        pytest.skip("chromium is not installed (make test installs it)")
    return exe


def _run(args: list[str]) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        cmd = [chromium(), *FLAGS, f"--user-data-dir={profile}", *args]
        return subprocess.run(cmd, capture_output=True, timeout=120, check=True)


def screenshot(page: Path, png: Path, width: int, height: int) -> np.ndarray:
    """Render ``page`` in a ``width`` x ``height`` window; the pixels as an (h, w, channels) array."""
    _run([f"--window-size={width},{height}", f"--screenshot={png}", page.resolve().as_uri()])
    return decode_png(png.read_bytes())


def dom(page: Path) -> str:
    """The page's DOM after Chromium loaded it, serialized."""
    return _run(["--dump-dom", page.resolve().as_uri()]).stdout.decode()


def decode_png(data: bytes) -> np.ndarray:
    """8-bit non-interlaced PNG (gray, gray+alpha, RGB, RGBA) -> (height, width, channels)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, []
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos : pos + 8])
        chunk = data[pos + 8 : pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            assert depth == 8 and interlace == 0, "only 8-bit non-interlaced PNGs"
        elif kind == b"IDAT":
            idat.append(chunk)
        pos += 12 + n
    ch = {0: 1, 4: 2, 2: 3, 6: 4}[ctype]
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), dtype=np.uint8).reshape(h, 1 + w * ch)
    out = np.zeros((h, w * ch), dtype=np.uint8)
    prev = np.zeros(w * ch, dtype=np.int64)
    for y in range(h):
        f, line = int(raw[y, 0]), raw[y, 1:].astype(np.int64)
        if f == 0:
            cur = line
        elif f == 1:  # Sub: running sum along the row, per channel
            cur = (np.cumsum(line.reshape(w, ch), axis=0) & 255).reshape(-1)
        elif f == 2:  # Up
            cur = (line + prev) & 255
        else:  # Average, Paeth: each byte needs its left neighbour's result
            cur = np.array(_sequential(f, line.tolist(), prev.tolist(), ch), dtype=np.int64)
        out[y] = cur
        prev = cur
    return out.reshape(h, w, ch)


def _sequential(f: int, line: list[int], up: list[int], ch: int) -> list[int]:
    cur = [0] * len(line)
    for i, x in enumerate(line):
        a = cur[i - ch] if i >= ch else 0
        b = up[i]
        if f == 3:
            cur[i] = (x + ((a + b) >> 1)) & 255
            continue
        c = up[i - ch] if i >= ch else 0
        pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
        cur[i] = (x + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    return cur


def pixels(img: np.ndarray, rgb: str) -> int:
    """How many pixels have exactly the color ``#rrggbb`` (or ``#rgb``)."""
    hexa = rgb.lstrip("#")
    if len(hexa) == 3:
        hexa = "".join(c * 2 for c in hexa)
    want = np.array([int(hexa[i : i + 2], 16) for i in (0, 2, 4)], dtype=np.uint8)
    return int((img[..., :3] == want).all(axis=-1).sum())
