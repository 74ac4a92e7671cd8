"""The Triton wing passes frozen records between its modules, never dicts: every function of
``bankproof.verifier.triton`` that another module calls has a return annotation naming no ``dict``
(read from the source), and what the wing's one analysis, its corpus entries and its profile return
holds no ``dict`` anywhere (walked at run time). Dicts a user writes (a kernels file's ``CONFIGS``)
are input, named below with why."""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Mapping
from pathlib import Path

import pytest
from bankproof.verifier.results import FrozenMap

ROOT = Path(__file__).resolve().parents[1]
WING = ROOT / "verifier" / "triton"
# functions whose dicts are the user's own input format, read as written, not results
INPUT_FORMATS = {
    ("corpus_configs", "builtin_configs"): "the kernels file's CONFIGS format: a list of dicts users write",
    ("corpus_generate", "expand_configs"): "more configurations in the kernels file's CONFIGS format",
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return "bankproof." + ".".join(p for p in parts if p != "__init__")


def _modules() -> dict[str, ast.Module]:
    out = {}
    for folder in ("verifier", "bankproof", "lab"):
        for p in (ROOT / folder).rglob("*.py"):
            name = _module_name(p) if folder != "lab" else ".".join(p.relative_to(ROOT).with_suffix("").parts)
            out[name] = ast.parse(p.read_text(encoding="utf-8"))
    return out


def _called_across(mods: dict[str, ast.Module]) -> set[tuple[str, str]]:
    """(wing module, function) pairs that some other module imports or calls as ``module.name``."""
    wing = {m for m in mods if m.startswith("bankproof.verifier.triton")}
    defined = {(m, n.name) for m in wing for n in mods[m].body if isinstance(n, ast.FunctionDef)}
    used = set()
    for m, tree in mods.items():
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    if f"{node.module}.{a.name}" in wing:
                        aliases[a.asname or a.name] = f"{node.module}.{a.name}"
                    elif (node.module, a.name) in defined and node.module != m:
                        used.add((node.module, a.name))
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name in wing:
                        aliases[a.asname or a.name.rsplit(".", 1)[-1]] = a.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                target = aliases.get(node.value.id)
                if target and target != m and (target, node.attr) in defined:
                    used.add((target, node.attr))
    return used


@pytest.mark.slow
def test_no_function_of_the_wing_returns_a_dict_to_another_module():
    mods = _modules()
    bad = []
    for mod, name in sorted(_called_across(mods)):
        if (mod.rsplit(".", 1)[-1], name) in INPUT_FORMATS:
            continue
        fn = next(n for n in mods[mod].body if isinstance(n, ast.FunctionDef) and n.name == name)
        ann = ast.unparse(fn.returns) if fn.returns is not None else None
        if ann is None or re.search(r"\bdict\b|\bDict\b", ann):
            bad.append(f"{mod}.{name} -> {ann}")
    assert not bad, "\n".join(bad)


@pytest.mark.slow
def test_the_check_sees_a_dict_result(monkeypatch):
    """The static check can fail: a wing function called from elsewhere, annotated ``-> dict``."""
    mods = _modules()
    tree = mods["bankproof.verifier.triton.scan"]
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "scan_text")
    assert ("bankproof.verifier.triton.scan", "scan_text") in _called_across(mods)
    assert not re.search(r"\bdict\b", ast.unparse(fn.returns))
    fn.returns = ast.Name("dict")
    assert re.search(r"\bdict\b", ast.unparse(fn.returns))


def dicts_in(value: object, path: str = "result") -> list[str]:
    """Where ``value`` holds a ``dict`` (records, tuples and read-only maps are walked)."""
    if isinstance(value, dict):
        return [path]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = []
        for f in dataclasses.fields(value):
            out += dicts_in(getattr(value, f.name), f"{path}.{f.name}")
        return out
    if isinstance(value, (list, tuple)):
        return [p for i, v in enumerate(value) for p in dicts_in(v, f"{path}[{i}]")]
    if isinstance(value, Mapping):
        return [p for k, v in value.items() for p in dicts_in(v, f"{path}[{k!r}]")]
    return []


def test_the_walk_finds_a_dict():
    from bankproof.verifier.triton.ledger_records import LedgerReport

    assert dicts_in(LedgerReport(totals=FrozenMap({"ld": {"wavefronts": 1}}))) == ["result.totals['ld']"]
    assert dicts_in(LedgerReport()) == []


def test_the_scan_of_the_sample_holds_no_dict():
    from bankproof.verifier.triton import pipeline
    from bankproof.verifier.triton.source import read_source

    text = (WING / "sample.ttgir").read_text()
    got = pipeline.analyse(read_source(text, "sample.ttgir"))
    assert got.report.buffers and dicts_in(got.report) == []


@pytest.mark.triton
def test_a_compiled_kernel_holds_no_dict_anywhere():
    """A warp-specialized TMA matmul, a reduction and a histogram, compiled for sm90 and sm100: the analysis
    (scan, ledger, descriptors), the corpus entry, and the entry read back from the results store."""
    pytest.importorskip("triton")
    import tempfile

    from bankproof.verifier.triton.corpus_configs import builtin_configs
    from bankproof.verifier.triton.dispatch import of_job
    from bankproof.verifier.triton.jobs import compile_kernel, make_entry
    from bankproof.verifier.triton.store import Artifact, ResultStore

    store = ResultStore(tempfile.mkdtemp())
    kinds = ("matmul_tma_persistent_ws", "softmax", "histogram")
    picked = [next(c for c in builtin_configs() if c["kernel"] == k) for k in kinds]
    for arch in ("sm90", "sm100"):
        for c in picked:
            job = (c["name"], arch, compile_kernel(c, arch), None)
            entry = make_entry(*job)
            assert entry.compiled and entry.ledger is not None
            assert dicts_in(entry) == [], (c["name"], arch)
            store.save("ab" * 32, Artifact.of_job(job))
            back = of_job(store.load("ab" * 32), ({"name": c["name"]}, arch), "ab" * 32, [])
            assert back == entry and dicts_in(back) == []
