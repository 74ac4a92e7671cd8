"""The README's and the docs' console blocks are real: every ``$ bankproof ...`` block is run and its shown
lines must appear in the output, in order (``...`` on a line of its own skips lines; inside a
line it stands for any text)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from bankproof.verifier.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"```console\n(.*?)```", re.S)


GENERATED = {
    "commands.md",
    "api.md",
    "instructions.md",
    "mcp.md",
}  # docs/generate.py's pages: no console blocks
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md") if p.name not in GENERATED)]


def _blocks() -> list[tuple[str, list[str]]]:
    """Every ``$ bankproof`` console block of the README and the written docs pages."""
    out = []
    for block in (b for page in PAGES for b in BLOCK.findall(page.read_text())):
        first, *shown = block.rstrip("\n").split("\n")
        if first.startswith("$ bankproof ") and "|" not in first:
            out.append((first[2:], shown))
    return out


def _matches(pattern: str, line: str) -> bool:
    return re.fullmatch(".*?".join(re.escape(p) for p in pattern.split("...")), line) is not None


def test_readme_has_console_blocks():
    commands = [c for c, _ in _blocks()]
    assert len(commands) >= 7
    assert "bankproof verify examples/transpose_16x32_xor_m.toml" in commands
    assert any(
        c.startswith("bankproof show examples/transpose_16x32_xor_m.toml --access read") for c in commands
    )


@pytest.mark.slow
@pytest.mark.parametrize("command,shown", _blocks(), ids=lambda v: v if isinstance(v, str) else "")
def test_readme_output_is_real(command, shown, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    argv = [a.replace("report.html", str(tmp_path / "report.html")) for a in shlex.split(command)[1:]]
    main(argv)
    actual = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    pos, skipping = 0, False
    for want in (line.rstrip() for line in shown):
        if want.strip() == "...":
            skipping = True
            continue
        at = next((i for i in range(pos, len(actual)) if _matches(want, actual[i])), None)
        assert at is not None, f"README line not in the output of {command!r} (in order): {want!r}"
        assert skipping or at == pos, f"README skips output lines before {want!r} without '...'"
        pos, skipping = at + 1, False


PYCON = re.compile(r"```pycon\n(.*?)```", re.S)


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES[1:] if PYCON.search(p.read_text())], ids=lambda p: p.name)
def test_docs_python_sessions_run(page, monkeypatch):
    """Every Python session of a docs page runs as a doctest, from the repository root."""
    import doctest

    monkeypatch.chdir(ROOT)
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for i, block in enumerate(PYCON.findall(page.read_text())):
        runner.run(parser.get_doctest(block, {}, f"{page.name}[{i}]", str(page), 0))
    assert runner.failures == 0 and runner.tries >= 2


@pytest.mark.slow
def test_readme_python_examples_run(monkeypatch):
    """The README's Python session runs as a doctest, from the repository root."""
    import doctest

    monkeypatch.chdir(ROOT)
    blocks = PYCON.findall((ROOT / "README.md").read_text())
    assert blocks and "import bankproof" in blocks[0]
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for i, block in enumerate(blocks):
        runner.run(parser.get_doctest(block, {}, f"README[{i}]", "README.md", 0))
    assert runner.failures == 0 and runner.tries >= 10
