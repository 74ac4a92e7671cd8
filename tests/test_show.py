"""``bankproof show``: the bank scope of one instruction, as text and as SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from bankproof.verifier.cli.main import main

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
    lines = out.splitlines()
    at = lines.index(words)
    assert [line.split() for line in lines[at + 1 : at + 3]] == [["2"] + ["██"] * 16, ["1"] + ["██"] * 16]
    assert lines[at + 3].startswith("conflict")
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    rects = list(root.iter("{http://www.w3.org/2000/svg}rect"))
    fills = [r.get("fill") for r in rects if r.get("class") == "scope"]
    assert fills.count("#d33") == 32 and len(fills) == 16 * 32  # 32 conflicting cells on 16 rows
    matrix = [r.get("fill") for r in rects if r.get("class") == "matrix"]
    assert len(matrix) == 9 * 9 + 9 * 9 and matrix.count("#2a6") == 13 + 9  # memory, then read


def test_matrix_views_in_text(capsys):
    """Seed 000's matrices: the XOR-m memory layout's segment bit o5 carries m0 and n0 together,
    and the read's lane bit l4 is n0 (the direction the two conflicting lanes differ by)."""
    assert (
        main(["show", str(EXAMPLES / "transpose_16x32_xor_m.toml"), "--access", "read", "--color", "never"])
        == 0
    )
    out = capsys.readouterr().out
    mem = out[out.index("memory layout: offset bits -> tensor bits (32-bit elements)") :]
    lines = mem.splitlines()
    assert lines[1].split("|")[:2] == ["               bank", "     segment"]
    assert lines[2] == "     o0 o1 o2 o3 o4| o5 o6 o7 o8"
    assert lines[3] == "  n0  1  .  .  .  .|  1  .  .  ."
    assert lines[8] == "  m0  .  .  .  .  .|  1  .  .  ."
    acc = out[out.index("access 'read': register/lane/warp bits -> tensor bits") :].splitlines()
    assert acc[2] == "     r0 r1 r2 r3| l0 l1 l2 l3 l4"
    assert acc[3] == "  n0  .  .  .  .|  .  .  .  .  1"
    assert "\033[" not in out


def test_color_always_marks_conflicts_red(capsys):
    assert (
        main(["show", str(EXAMPLES / "transpose_16x32_xor_m.toml"), "--access", "read", "--color", "always"])
        == 0
    )
    out = capsys.readouterr().out
    assert out.count("\033[41;97m") == 32 + 2 * 16  # the 32 lanes, then 16 banks' bars of height 2
    assert "\033[42;30m" not in out


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


PADDED = """shape = [16, 32]
dtype = "f16"
[memory]
triton = "#ttg.padded_shared<[16:+1] {order = [1, 0], shape = [16, 32]}>"
[[access]]
name = "read"
kind = "load"
instr = "ld16"
layout.bases = { register = [[0, 2], [0, 4], [0, 8], [0, 16]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]] }
"""


def test_default_instruction_is_the_first_costliest(tmp_path, capsys):
    """Padding makes instructions differ: columns 0-15 read conflict-free, 16-31 2-way; without
    --instruction, show picks instruction 8, the first that conflicts."""
    spec = tmp_path / "padded.toml"
    spec.write_text(PADDED)
    assert main(["show", str(spec), "--color", "never"]) == 0
    out = capsys.readouterr().out
    assert "instruction 8 of 16: 1 wavefront group(s)" in out
    assert "group 0: 2 wavefront(s)" in out
    assert main(["show", str(spec), "--instruction", "0", "--color", "never"]) == 0
    out = capsys.readouterr().out
    assert "instruction 0 of 16" in out and "group 0: 1 wavefront(s)" in out
    assert (
        "memory layout: offset bits -> tensor bits (16-bit elements); padding is not linear and not shown"
        in out
    )


class _Tty:
    """A terminal stand-in: what the command writes, and ``isatty`` True."""

    def __init__(self):
        self.text = ""

    def write(self, s: str) -> None:
        self.text += s

    def isatty(self) -> bool:
        return True


def test_no_color_turns_auto_colour_off_on_a_terminal(monkeypatch):
    import io

    from bankproof.verifier.cli.main import main as run

    args = ["show", str(EXAMPLES / "transpose_16x32_xor_m.toml"), "--access", "read"]
    monkeypatch.delenv("NO_COLOR", raising=False)
    tty = _Tty()
    assert run(args, out=tty, err=io.StringIO()) == 0
    assert "\033[41;97m" in tty.text  # auto on a terminal: coloured
    monkeypatch.setenv("NO_COLOR", "1")
    tty = _Tty()
    assert run(args, out=tty, err=io.StringIO()) == 0
    assert "\033[" not in tty.text
    tty = _Tty()
    assert run([*args, "--color", "always"], out=tty, err=io.StringIO()) == 0
    assert "\033[41;97m" in tty.text  # asked for: coloured whatever NO_COLOR says
