"""What a Python or notebook user sees of a result: ``print(result)`` is the command's report,
a notebook gets one payload (HTML with any bank map inside it once, and the plain report), and the
HTML's text keeps its columns in a monospace ``<pre>``."""

from __future__ import annotations

from bankproof.verifier.results.base import Result

import bankproof

ROWS = (
    "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>"
)
SPEC = {"shape": [32], "dtype": "f32", "memory": {"formula": "i"},
        "access": [{"kind": "store", "layout": {"bases": {"lane": [[1], [2], [4], [8], [16]]}}}]}  # fmt: skip


def _results() -> list[Result]:
    return [
        bankproof.verify(spec=SPEC),
        bankproof.wavefronts("ld32", [0] * 32),
        bankproof.layout("Sw<3,2,3> o (8,8):(1,8)", dtype="f32", banks=True),
        bankproof.show("32*m + n", store=ROWS, shape=(16, 32), dtype="f32"),
    ]


def test_str_is_the_report_and_repr_the_record():
    for r in _results():
        assert str(r) == r.to_text() and str(r) != repr(r)
        assert repr(r).startswith(type(r).__name__ + "(")
    assert str(bankproof.wavefronts("ld32", [0] * 32)).splitlines()[0] == "1 wavefront (ideal 1), measured"


def test_a_notebook_gets_one_payload():
    for r in _results():
        bundle = r._repr_mimebundle_()
        assert sorted(bundle) == ["text/html", "text/plain"]
        assert bundle["text/plain"] == r.to_text()
        html = bundle["text/html"]
        assert html.count('<pre style="font-family: monospace">') == 1
        svgs = html.count("<svg")
        assert svgs == (1 if r._repr_svg_() is not None else 0)  # a bank map once, inside the HTML
    assert _results()[-1]._repr_svg_() is not None  # show() draws one
