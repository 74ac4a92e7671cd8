"""``bankproof show``: the bank scope of one instruction, as text and as SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from verifier.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_xor_m_read_shows_the_two_way_conflict(tmp_path, capsys):
    """Seed 001's picture: two hits on each of sixteen banks, the other sixteen dark."""
    svg = tmp_path / "scope.svg"
    assert (
        main(["show", str(EXAMPLES / "transpose_16x32_xor_m.toml"), "--access", "read", "--svg", str(svg)])
        == 0
    )
    out = capsys.readouterr().out
    assert "group 0: 2 wavefront(s)" in out
    assert "16 banks with 2 different words, 16 banks dark" in out
    words = next(line for line in out.splitlines() if line.startswith("words"))
    assert words.split()[1:] == ["2"] * 16 + ["."] * 16
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    fills = [r.get("fill") for r in root.iter("{http://www.w3.org/2000/svg}rect")]
    assert fills.count("#d33") == 32 and len(fills) == 16 * 32  # 32 conflicting cells on 16 rows


def test_xor_2m_read_is_conflict_free(capsys):
    assert main(["show", str(EXAMPLES / "transpose_16x32_xor_2m.toml"), "--access", "read"]) == 0
    assert "conflict-free: every bank serves one word, 0 banks dark" in capsys.readouterr().out


def test_wide_store_has_four_groups(capsys):
    assert main(["show", str(EXAMPLES / "basetile_half_8x32.toml"), "--access", "store"]) == 0
    out = capsys.readouterr().out
    assert "4 wavefront group(s)" in out and out.count("conflict-free") == 4


def test_show_bad_arguments_exit_2(capsys):
    spec = str(EXAMPLES / "transpose_16x32_xor_m.toml")
    assert main(["show", spec, "--access", "nope"]) == 2
    assert "show: --access names no access of the spec (store, read), got nope" in capsys.readouterr().err
    assert main(["show", spec, "--instruction", "99"]) == 2
    assert "show: --instruction must be in [0, 16), got 99" in capsys.readouterr().err
