"""The options several commands share are defined once (issue 56, item 6): ``--json``,
``--timeout``, ``--arch`` and ``--engine`` only in ``verifier/cli/flags.py``, each command of the
parser its own small function; the help every command prints is unchanged by the split (the
generated commands page equals the code's: tests/test_docs.py)."""

from __future__ import annotations

import re
from pathlib import Path

from bankproof.verifier.cli.parser import build_parser, subcommands

CLI = Path(__file__).resolve().parent.parent / "verifier" / "cli"
SHARED = ("--json", "--timeout", "--arch")
_DEFINED = re.compile(r"add_argument\(\s*\"(--json|--timeout|--arch)\"")


def definitions(text: str) -> list[str]:
    """The shared options a module's text defines itself (outside flags.py they must not be)."""
    return _DEFINED.findall(text)


def test_shared_options_are_defined_only_in_flags():
    bad = {p.name: definitions(p.read_text()) for p in CLI.glob("*.py") if p.name != "flags.py"}
    assert {k: v for k, v in bad.items() if v} == {}
    assert sorted(set(definitions((CLI / "flags.py").read_text()))) == sorted(SHARED)


def test_the_flags_test_sees_an_option_defined_again():
    assert definitions('p.add_argument("--json", action="store_true")') == ["--json"]
    assert definitions('p.add_argument(\n    "--arch", default="sm90")') == ["--arch"]


def test_every_command_that_takes_them_gets_them_from_one_place():
    commands = dict(subcommands(build_parser()))
    with_json = [n for n, p in commands.items() if "--json" in p._option_string_actions]
    assert len(with_json) >= 10
    for name in with_json:
        action = commands[name]._option_string_actions["--json"]
        assert action.default is False and action.nargs == 0, name
    for name, p in commands.items():
        if "--timeout" in p._option_string_actions:
            assert p._option_string_actions["--timeout"].default == 10.0, name


def test_build_parser_is_one_small_function_per_command():
    text = (CLI / "parser.py").read_text()
    body = text.split("def build_parser()", 1)[1].split("\ndef ", 1)[0]
    assert len(body.splitlines()) <= 40 and body.count("add_argument") == 1  # --version


# an annotated parameter's default, a missing key's, a missing argument's
_DEFAULTED = re.compile(r"arch:[^=,)]*=\s*\"sm\d+\"|get\(\"arch\", \"sm\d+\"\)|arch or \"sm\d+\"")
ROOT = CLI.parent.parent


def arch_defaults(text: str) -> list[str]:
    """Signatures that write a default arch out instead of naming DEFAULT_ARCH."""
    return _DEFAULTED.findall(text)


def test_the_default_arch_is_named_once():
    """``models/archs.py`` holds it; every signature and flag takes it from there (item 5 of
    issue 56: one default arch named once)."""
    bad = {}
    for folder in ("verifier", "models", "proofs", "gpu_checks", "bankproof"):
        for p in (ROOT / folder).rglob("*.py"):
            found = arch_defaults(p.read_text())
            if found and p.name != "archs.py":
                bad[str(p.relative_to(ROOT))] = found
    assert bad == {}


def test_the_default_arch_test_sees_one_written_out():
    assert arch_defaults('def f(x, arch: str = "sm90"):') == ['arch: str = "sm90"']
    assert arch_defaults('f(arch="sm100")') == []  # a call names the arch it means
    assert arch_defaults('data.get("arch", "sm90")') == ['get("arch", "sm90")']
