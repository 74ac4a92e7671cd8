"""The options several commands share, each defined once: ``--json``, ``--timeout``, ``--arch``
and the engines (``--engine``). A command passes only what its help says differently.

>>> import argparse
>>> p = argparse.ArgumentParser()
>>> json_flag(p); timeout_flag(p); arch_flag(p)
>>> vars(p.parse_args(["--json", "--timeout", "2"]))
{'json': True, 'timeout': 2.0, 'arch': 'sm90'}
"""

from __future__ import annotations

import argparse

from bankproof.models.archs import DEFAULT_ARCH


def command(sub, name: str, **kw) -> argparse.ArgumentParser:
    """The parser of command ``name`` (``kw``: its help and description), which runs ``name``."""
    p = sub.add_parser(name, **kw)
    p.set_defaults(run=name)
    return p


def json_flag(p, help: str = "machine-readable output") -> None:
    """``--json``: the command's answer as JSON."""
    p.add_argument("--json", action="store_true", help=help)


def timeout_flag(p, help: str = "seconds per solver query (default 10)") -> None:
    """``--timeout``: seconds per Z3 query (default 10)."""
    p.add_argument("--timeout", type=float, default=10.0, help=help)


def arch_flag(p, help: str = f"the target arch (default {DEFAULT_ARCH})", **kw) -> None:
    """``--arch``: the target (default :data:`DEFAULT_ARCH`; ``kw`` as argparse's, e.g. choices)."""
    p.add_argument("--arch", **{"default": DEFAULT_ARCH, **kw}, help=help)


def engine_flag(p, help: str, default: str | None = "all") -> None:
    """``--engine`` (or ``--engines``): which engines answer each access (enum, algebra, z3, all)."""
    p.add_argument("--engine", "--engines", dest="engine", choices=ENGINE_CHOICES, default=default, help=help)


ENGINE_CHOICES = ["enum", "algebra", "z3", "all"]


def engine_options(p: argparse.ArgumentParser, json_help: str, engine_help: str) -> None:
    """``--json``, ``--engine`` and ``--timeout``, shared by verify and synth."""
    json_flag(p, json_help)
    engine_flag(p, engine_help)
    timeout_flag(p)
