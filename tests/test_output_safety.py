"""Names a user gives (access names, spec paths, TTGIR source locations) cannot drive a terminal
or break a page: ESC, BEL, NUL and the bidi override U+202E come out as visible escapes in text,
in HTML, and in SVG, which stays well-formed XML."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from bankproof.verifier.cli.main import main
from bankproof.verifier.render import html as html_render
from bankproof.verifier.triton.scan import scan_text

import bankproof

EVIL = "r\x1b]0;pwned\x07\x00\u202eX"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]")
BASES = {"register": [[1, 0], [2, 0], [4, 0], [8, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]}
SPEC = {"shape": [16, 32], "dtype": "f32", "memory": {"formula": "32*m + (n ^ m)"},
        "access": [{"name": EVIL, "kind": "store", "layout": {"bases": BASES}}]}  # fmt: skip


def test_names_are_escaped_in_text_html_and_svg():
    r = bankproof.verify(spec=SPEC)
    for out in (r.to_text(), r._repr_html_()):
        assert not RAW.search(out) and r"r\x1b]0;pwned\x07\x00\u202eX" in out
    s = bankproof.show(spec=SPEC, access=EVIL)
    svg = s._repr_svg_()
    assert not RAW.search(svg)
    ET.fromstring(svg)  # well-formed XML
    assert not RAW.search(s._repr_html_())


def test_the_cli_escapes_what_it_prints_and_keeps_its_own_colours(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(
        'shape = [16, 32]\ndtype = "f32"\n[memory]\nformula = "32*m + n"\n[[access]]\n'
        'name = "r\\u001b]0;pwned\\u0007\\u202e"\nkind = "load"\n'
        "layout = { bases = { register = [[1,0],[2,0],[4,0],[8,0]], lane = [[0,1],[0,2],[0,4],[0,8],[0,16]] } }\n"
    )
    out, err = io.StringIO(), io.StringIO()
    assert main(["verify", str(spec), "--html", str(tmp_path / "r.html")], out, err) == 0
    assert not RAW.search(out.getvalue()) and r"r\x1b]0;pwned\x07\u202e" in out.getvalue()
    assert not RAW.search((tmp_path / "r.html").read_text())
    out = io.StringIO()
    main(["layout", "#ttg.bogus\x1b[2J<{}>", "--shape", "4"], out, err)
    assert not RAW.search(err.getvalue()) and r"\x1b[2J" in err.getvalue()


def test_ttgir_source_locations_are_escaped_in_the_scan_report():
    text = (Path(html_render.__file__).parents[1] / "triton" / "sample.ttgir").read_text()
    evil = text.replace('"transpose.py"', '"t\\1B]0;x\\07.py"').replace("transpose.py", "t\x1b]0;x\x07.py")
    rep = bankproof.scan_ttgir(evil, path="k\u202e.ttgir")
    assert not RAW.search(rep.to_text())
    assert scan_text(text).buffers  # the sample itself still scans


def test_a_ttgir_name_location_is_escaped_where_it_names_a_buffer(tmp_path):
    """The source's name for a buffer (a name location) is printed in text, SARIF and HTML."""
    text = (Path(html_render.__file__).parents[1] / "triton" / "sample.ttgir").read_text()
    evil = text.replace('loc("x"(#loc1))', 'loc("x\x1b]0;x\x07<b>&\u202e"(#loc1))')
    rep = bankproof.scan_ttgir(evil, path="k.ttgir")
    (buf,) = rep.reports[0].buffers
    assert buf.name == "x\x1b]0;x\x07<b>&\u202e" and buf.label == buf.name
    assert not RAW.search(rep.to_text()) and not RAW.search(rep._repr_html_())
    assert "<b>" not in rep._repr_html_()
    ttgir = tmp_path / "k.ttgir"
    ttgir.write_text(evil)
    out, err = io.StringIO(), io.StringIO()
    main(["triton", "scan", str(ttgir), "--sarif"], out, err)
    assert not RAW.search(out.getvalue()) and not RAW.search(err.getvalue())


def test_the_page_keeps_its_lines(tmp_path):
    """Escaping control characters must not escape a <pre> block's own newlines and tabs (it did:
    every report became one line of \\x0a)."""
    page = tmp_path / "r.html"
    assert main(["verify", str(Path(__file__).resolve().parents[1] / "examples" / "transpose_16x32_xor_m.toml"),
                 "--html", str(page)], io.StringIO(), io.StringIO()) == 1  # fmt: skip
    text = page.read_text()
    assert "\\x0a" not in text and "\\x09" not in text and text.count("\n") > 100
