"""``bankproof verify SPEC --html FILE``: one self-contained page (inline CSS and SVG, no scripts,
nothing fetched) with the verdicts of every engine, the counterexample, each access's bank map
and matrix view, the memory layout's matrix, and the §5.4 construction for the spec's writer and
reader.

>>> from bankproof.verifier.engine.check import verify
>>> from bankproof.verifier.engine.scope import page_data
>>> from bankproof.verifier.api.spec_file import parse_spec
>>> blocked = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>"
>>> spec = parse_spec({"shape": [32], "dtype": "f32", "memory": {"formula": "i"},
...                    "access": [{"name": "st", "kind": "store", "layout": {"triton": blocked}}]})
>>> result = verify(spec)
>>> page = to_html(result, page_data(spec, result))
>>> "<title>bankproof: <spec> proved</title>" in page.replace("&lt;", "<").replace("&gt;", ">")
True
"""

from __future__ import annotations

from bankproof.models.hardware import BANK_BYTES
from bankproof.verifier.render import explain as explain_text
from bankproof.verifier.render import scope as scope_render
from bankproof.verifier.render import text as text_report
from bankproof.verifier.render.matrix import matrix_html
from bankproof.verifier.render.safe import escape
from bankproof.verifier.render.text import ptx_name
from bankproof.verifier.results import PageData, VerifyResult

CSS = """
body { font-family: system-ui, sans-serif; margin: 24px; color: #111; background: #fff; max-width: 1100px; }
h1 { font-size: 22px; } h2 { font-size: 18px; border-bottom: 1px solid #ccc; margin-top: 28px; }
.badge { display: inline-block; padding: 4px 12px; border-radius: 4px; color: #fff; font-weight: bold; }
.proved { background: #2a7d46; } .refuted { background: #c62828; }
.unknown { background: #8a6d00; } .disagree { background: #6a1b9a; } .n\\/a { background: #777; }
table { border-collapse: collapse; margin: 8px 0; }
td, th { border: 1px solid #ccc; padding: 3px 8px; text-align: left; font-size: 14px; }
table.matrix td, table.matrix th { padding: 1px 5px; font-family: monospace; text-align: center; }
table.matrix td.one { background: #2a6; color: #fff; }
caption { text-align: left; font-family: monospace; padding: 4px 0; white-space: nowrap; }
pre { background: #f6f6f6; padding: 10px; overflow-x: auto; font-size: 13px; }
code { background: #f0f0f0; padding: 1px 4px; word-break: break-all; }
.scope { overflow-x: auto; }
"""


def _badge(status: str) -> str:
    return f'<span class="badge {escape(status)}">{escape(status)}</span>'


def _summary(rep: dict, states: dict[str, str]) -> str:
    rows = []
    for a in rep["accesses"]:
        engines = "<br>".join(
            f"{escape(e)}: {_badge(r['verdict'])} {r['wavefronts'] if r['wavefronts'] is not None else ''}"
            + (f" ({escape(r['reason'])})" if r.get("reason") else "")
            for e, r in a["engines"].items()
        )
        cost = a["wavefronts"] if a["wavefronts"] is not None else "?"
        rows.append(
            f"<tr><td>{escape(a['name'])}</td><td>{escape(a['kind'])}</td>"
            f"<td>{a['instructions']} × {escape(ptx_name(a['instr']))}</td><td>{cost}</td>"
            f"<td>{a['ideal']}</td><td>{escape(states[a['name']])}</td>"
            f"<td>{_badge(a['proof']['status'])} by {escape(a['proof']['engine'])}</td>"
            f"<td>{engines}</td></tr>"
        )
    head = (
        "<tr><th>access</th><th>kind</th><th>instructions</th><th>wavefronts</th><th>ideal</th>"
        "<th>state</th><th>verdict</th><th>engines</th></tr>"
    )
    return f"<table>{head}{''.join(rows)}</table>"


def _counterexample(cx: dict) -> str:
    rows = "".join(
        f"<tr><td>{lane}</td><td>{escape(', '.join(f'{k}={v}' for k, v in coords.items()))}</td>"
        f"<td>{addr}</td><td>{addr // BANK_BYTES}</td><td>{cx['bank']}</td></tr>"
        for lane, coords, addr in zip(cx["lanes"], cx["coords"], cx["byte_addresses"])
    )
    where = (
        f"warp {cx['warp']}, instruction {cx['instruction']} (register {cx['register']}), phase {cx['phase']}"
    )
    return (
        f"<p><b>Counterexample</b>: lanes {cx['lanes'][0]} and {cx['lanes'][1]} of {where} hit bank "
        f"{cx['bank']} at different words: {cx['wavefronts']} wavefronts where {cx['ideal']} would do.</p>"
        f"<table><tr><th>lane</th><th>element</th><th>byte</th><th>word</th><th>bank</th></tr>{rows}</table>"
        f"<p>Reproduce: <code>{escape(cx['reproduce'])}</code></p>"
    )


def _access_section(page: PageData, a: dict, state: str) -> str:
    parts = [f"<h2>Access {escape(a['name'])} ({escape(a['kind'])}, {escape(ptx_name(a['instr']))})</h2>"]
    parts.append(f"<p>{_badge(a['proof']['status'])} {escape(state)}</p>")
    if a["conflict"]:
        parts.append(_counterexample(a["conflict"]))
    why = a["engines"].get("algebra", {}).get("conflict_directions")
    if why:
        parts.append(
            f"<p><b>Why</b> (Lemma 9.4): span(segment bits) ∩ span(lane bits of one phase) has the basis "
            f"{escape(', '.join(why))}: lanes that differ by these directions reach the same bank in "
            f"different segments, 2<sup>{len(why)}</sup> words per bank.</p>"
        )
    scope = page.scopes[a["name"]]
    if isinstance(scope, str):
        parts.append(f"<p>No bank map: {escape(scope)}</p>")
    else:
        parts.append(
            f"<p>Bank map of instruction {scope.instruction} (rows: 128-byte segments; columns: banks; red: "
            "a bank serving several words; dark: unused):</p>"
            f'<div class="scope">{scope_render.to_svg(scope, with_matrices=False)}</div>'
        )
    parts.append(matrix_html(page.access_matrices[a["name"]]))
    return "\n".join(parts)


def _explanation(page: PageData) -> str:
    if isinstance(page.explanation, str):
        return f"<p>The §5.4 construction does not apply to this spec: {escape(page.explanation)}</p>"
    rows = "".join(
        f"<tr><th>{escape(name)}</th><td><code>{escape(value)}</code></td></tr>"
        for name, value in page.notations.items()
    )
    intro = "<p>The constructed layout in every notation that expresses it:</p>"
    return f"<pre>{escape(explain_text.to_text(page.explanation))}</pre>{intro}<table>{rows}</table>"


def to_html(result: VerifyResult, page: PageData | None = None) -> str:
    """The page for a verify result; ``page`` adds the bank maps, matrices and §5.4 narrative."""
    rep = result.to_dict()
    states = {a.name: a.state for a in result.accesses}
    title = f"bankproof: {rep['spec']} {rep['verdict']}"
    shape = "x".join(map(str, rep["shape"]))
    mem = rep["memory"]
    body = [
        f"<h1>{escape(rep['spec'])}</h1>",
        f"<p>{shape} {escape(rep['dtype'])} on {escape(rep['arch'])}; memory ({escape(mem['notation'])}): "
        f"<code>{escape(mem['text'])}</code></p>",
        f"<p>Verdict: {_badge(rep['verdict'])} (exit {text_report.exit_code(rep['verdict'])})</p>",
    ]
    if rep["verdict"] == "disagree":
        body.append("<p><b>The engines disagree on this spec: please report it.</b></p>")
    body += ["<h2>Verdicts</h2>", _summary(rep, states)]
    if page is not None:
        body += [_access_section(page, a, states[a["name"]]) for a in rep["accesses"]]
        body += ["<h2>Memory layout</h2>", matrix_html(page.memory_matrix)]
        body += ["<h2>The §5.4 construction for this writer and reader</h2>", _explanation(page)]
    body.append(f"<h2>Text report</h2><pre>{escape(text_report.to_text(result))}</pre>")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
