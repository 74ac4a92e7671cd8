"""The results shown as themselves: ``to_text()`` (what the command prints), ``_repr_html_`` for
notebooks and ``_repr_svg_`` for bank maps, wired to the renderers here so the result values stay
below the renderers in the import graph (``bankproof`` imports this on first use).

>>> import bankproof
>>> r = bankproof.wavefronts("ld32", [0] * 32)
>>> r.to_text().splitlines()[0]
'1 wavefront (ideal 1), measured'
"""

from __future__ import annotations

import json

from bankproof.verifier import results
from bankproof.verifier.kernel.records import KernelResult
from bankproof.verifier.render import engines as engines_render
from bankproof.verifier.render import explain as explain_render
from bankproof.verifier.render import kernel as kernel_render
from bankproof.verifier.render import layout as layout_render
from bankproof.verifier.render import scan as scan_render
from bankproof.verifier.render import scope as scope_render
from bankproof.verifier.render import text as text_render
from bankproof.verifier.render.safe import escape, terminal, uncoloured
from bankproof.verifier.triton.results import ScanResult


def _wavefronts_text(r: results.WavefrontsResult) -> str:
    count = "unknown" if r.wavefronts is None else f"{r.wavefronts} wavefront{'s' * (r.wavefronts != 1)}"
    lines = [f"{count} (ideal {r.ideal}), {r.rests_on}"]
    lines += [f"  wavefront {i}: lanes {', '.join(map(str, g))}" for i, g in enumerate(r.groups)]
    return "\n".join(lines)


TEXT = {
    results.SynthResult: text_render.synth_text,
    results.AgreeResult: engines_render.agree_text,
    results.VerifyResult: text_render.to_text,
    results.ConvertResult: text_render.convert_text,
    results.GpuResult: text_render.gpu_text,
    results.ExplainResult: explain_render.to_text,
    results.LayoutResult: layout_render.to_text,
    results.ShowResult: scope_render.to_text_with_matrices,
    results.WavefrontsResult: _wavefronts_text,
    ScanResult: scan_render.to_text,
    KernelResult: kernel_render.to_text,
}


def to_text(result: object) -> str:
    """What ``bankproof`` prints for ``result`` (JSON for the results with no text form), safe
    for a terminal: a name's control characters come out as escapes."""
    for kind, render in TEXT.items():  # SynthResult before VerifyResult: it is one
        if isinstance(result, kind):
            return terminal(render(result))
    return result.to_json() if hasattr(result, "to_json") else json.dumps(result)


def to_html(result: object) -> str:
    """A notebook cell's view: the text in a monospace ``<pre>`` (columns stay aligned whatever the
    notebook's font), escaped; bank maps add their SVG."""
    body = f'<pre style="font-family: monospace">{escape(uncoloured(to_text(result)))}</pre>'
    svg = to_svg(result)
    return body if svg is None else svg + body


def to_svg(result: object) -> str | None:
    """The bank map of a ``ShowResult`` as SVG (``None`` for other results)."""
    if isinstance(result, results.ShowResult):
        return scope_render.to_svg(result)
    return None


results.Result.DISPLAY = {"text": to_text, "html": to_html, "svg": to_svg}
