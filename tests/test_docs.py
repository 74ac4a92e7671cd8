"""The documentation site (``docs/``, Sphinx with MyST Markdown): its reference pages are the
code's own (regenerated and compared, so they cannot drift; every flag and signature present) and
the site builds with warnings as errors."""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

import bankproof

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs"))
import generate  # noqa: E402 - the docs' own generator, beside its pages


def test_the_reference_pages_are_the_codes():
    """``python docs/generate.py`` rewrites them; a flag or signature changed without it fails here."""
    for key, text in generate.pages().items():
        assert generate.PAGES[key].read_text() == text, f"run python docs/generate.py ({key} is stale)"


def missing(commands: str, api: str) -> list[str]:
    """The commands, flags and API signatures a reference text lacks."""
    from bankproof.verifier.cli.parser import build_parser, subcommands

    out = []
    for command, sub in subcommands(build_parser()):
        name = f"bankproof {command}"
        if f"## `{name}`" not in commands:
            out.append(name)
            continue
        section = commands.split(f"## `{name}`")[1].split("\n## ")[0]
        for action in sub._actions:
            if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                out += [f"{name} {flag}" for flag in action.option_strings if f"`{flag}`" not in section]
    for name in bankproof.__all__:
        obj = getattr(bankproof, name)
        if inspect.isfunction(obj) and f"bankproof.{name}{inspect.signature(obj)}" not in api:
            out.append(f"bankproof.{name}")
        if inspect.isclass(obj) and f"### `bankproof.{name}`" not in api:
            out.append(f"bankproof.{name}")
    return out


def test_every_flag_and_every_signature_is_in_the_reference():
    assert missing(generate.PAGES["commands"].read_text(), generate.PAGES["api"].read_text()) == []


def test_the_check_sees_a_missing_flag_and_signature():
    commands, api = generate.commands_page(), generate.api_page()
    assert missing(commands.replace("`--weights`", "weights"), api) == ["bankproof synth --weights"]
    assert missing(commands, api.replace("bankproof.verify(", "verify(")) == ["bankproof.verify"]
    assert missing(commands, api.replace("### `bankproof.AgreeResult`", "")) == ["bankproof.AgreeResult"]


@pytest.mark.slow
def test_the_site_builds_without_a_warning(tmp_path):
    if importlib.util.find_spec("sphinx") is None or importlib.util.find_spec("myst_parser") is None:
        pytest.skip("needs sphinx and myst-parser (the test extra)")
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                           str(ROOT / "docs"), str(tmp_path / "site")], capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    for page in (
        "index",
        "tutorial",
        "reference/commands",
        "reference/api",
        "reference/formats/spec",
        "howto/ci",
    ):
        assert (tmp_path / "site" / f"{page}.html").is_file(), page


LINK = re.compile(r"\]\(([^)\s]+)\)")


def broken_links(page: Path) -> list[str]:
    """The relative links of a Markdown page whose file does not exist (web links and anchors in
    the page are left to the site build)."""
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)  # code is not links
    out = []
    for target in LINK.findall(re.sub(r"`[^`]*`", "", text)):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        if not (page.parent / target.split("#", 1)[0]).exists():
            out.append(f"{page.name}: {target}")
    return out


def test_every_relative_link_of_the_readme_and_the_docs_resolves():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    assert [b for page in pages for b in broken_links(page)] == []


def test_the_link_check_sees_a_broken_link(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](page.md), [web](https://example.com), [here](#a), `x[1](2)`, [gone](missing.md#part)"
    )
    assert broken_links(page) == ["page.md: missing.md#part"]


def test_every_mcp_tool_and_its_arguments_are_in_the_reference():
    from bankproof.verifier.agents.mcp_server import TOOLS

    page = generate.PAGES["mcp"].read_text()
    for name, fn in TOOLS.items():
        assert f"## `{name}`" in page and f"{name}{inspect.signature(fn)}" in page, name


def test_the_help_names_the_documentation_and_it_exists():
    from bankproof.models.version import DOCS
    from bankproof.verifier.cli.parser import build_parser

    assert f"documentation: {DOCS}/index.md" in " ".join(build_parser().format_help().split())
    assert (ROOT / "docs" / "index.md").is_file() and DOCS.endswith("/blob/main/docs")
