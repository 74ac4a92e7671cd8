"""Packaging: one import name (``bankproof``), every module imported by that name only, and the
doctests of all four folders (models, proofs, gpu_checks, verifier) plus the API."""

from __future__ import annotations

import ast
import doctest
import importlib
import importlib.util
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("models", "proofs", "gpu_checks", "verifier")
# Modules that import an optional extra at import time.
NEEDS = {"bankproof.verifier.triton.corpus_kernels": "triton"}


def all_modules() -> list[str]:
    """Every module of the package, named as installed (found on disk: an editable install's
    finder maps the folders, so ``pkgutil`` does not see them through ``bankproof.__path__``)."""
    names = {"bankproof"} | {f"bankproof.{p.stem}" for p in (ROOT / "bankproof").glob("*.py")}
    for folder in FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            parts = [p for p in path.relative_to(ROOT / folder).with_suffix("").parts if p != "__init__"]
            names.add(".".join(["bankproof", folder, *parts]))
    return sorted(names - {"bankproof.__init__"})


def test_every_module_imports_by_the_one_name():
    for name in all_modules():
        if name in NEEDS and importlib.util.find_spec(NEEDS[name]) is None:
            continue
        mod = importlib.import_module(name)
        folder = name.split(".")[1] if "." in name else "bankproof"
        assert Path(mod.__file__).resolve().is_relative_to(ROOT / folder), (name, mod.__file__)


@pytest.mark.parametrize("name", all_modules())
def test_doctests(name):
    """Each module's docstring examples run (``make test`` runs every folder's doctests)."""
    extra = NEEDS.get(name)
    if extra and importlib.util.find_spec(extra) is None:
        pytest.skip(f"needs the {extra} extra")
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctest examples failed in {name}"


FOREIGN = re.compile(r"^\s*(?:(?:>>>|\.\.\.)\s+)?(from|import)\s+(models|proofs|gpu_checks|verifier)\b", re.M)


def test_no_module_is_imported_under_its_folder_name():
    """``import models`` would load a second copy of a module (and collide with users' packages)."""
    bad = []
    for path in ROOT.rglob("*.py"):
        if ".venv" in path.parts or "build" in path.parts:
            continue
        for m in FOREIGN.finditer(path.read_text(encoding="utf-8")):
            bad.append(f"{path.relative_to(ROOT)}: {m.group(0).strip()}")
    assert not bad


def test_importing_everything_loads_no_foreign_top_level_name():
    code = (
        "import sys, importlib\n"
        f"for name in {[m for m in all_modules() if m not in NEEDS]!r}:\n"
        "    importlib.import_module(name)\n"
        f"bad = sorted(set(sys.modules) & {set(FOLDERS)!r})\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/", timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_wheel_has_one_top_level_name(tmp_path):
    """The built wheel installs exactly ``bankproof`` (and its dist-info), with every module and
    the data files the tool reads."""
    out = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path),
         str(ROOT)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    (wheel,) = tmp_path.glob("bankproof-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names}
    dist = {t for t in top if t.endswith(".dist-info")}
    assert top - dist == {"bankproof"}
    assert len(dist) == 1
    for folder in FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            assert f"bankproof/{folder}/{path.relative_to(ROOT / folder).as_posix()}" in names, path
    assert "bankproof/verifier/schema/verify-report.schema.json" in names
    assert "bankproof/verifier/triton/sample.ttgir" in names
    assert any(n.startswith("bankproof/gpu_checks/results/") and n.endswith(".json") for n in names)
    entry = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "bankproof = bankproof.verifier.cli:main" in entry


def test_build_requirement_supports_the_license_field():
    """``license = "Apache-2.0"`` (an SPDX string) needs setuptools >= 77."""
    text = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^license = "Apache-2.0"', text, re.M)
    m = re.search(r'requires = \["setuptools>=(\d+)"\]', text)
    assert m and int(m.group(1)) >= 77


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
