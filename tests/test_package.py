"""Packaging: one import name (``bankproof``), every module imported by that name only, and the
doctests of all four folders (models, proofs, gpu_checks, verifier) plus the API."""

from __future__ import annotations

import ast
import doctest
import importlib
import importlib.util
import re
import shutil
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
        parts = name.split(".")
        folder = parts[1] if len(parts) > 1 and parts[1] in FOLDERS else "bankproof"
        assert Path(mod.__file__).resolve().is_relative_to(ROOT / folder), (name, mod.__file__)


@pytest.mark.slow
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


@pytest.mark.slow
def test_wheel_has_one_top_level_name(tmp_path):
    """The built wheel installs exactly ``bankproof`` (and its dist-info), with every module and
    the data files the tool reads."""
    src = tmp_path / "src"  # build a copy: setuptools writes build/ next to the sources
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
    for name in files:
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    out = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path),
         str(src)],
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
    assert "bankproof/py.typed" in names  # PEP 561: type checkers read the hints
    assert "bankproof/verifier/triton/sample.ttgir" in names
    # what the product reads, and nothing else: the recorded measurements stay in the repository
    data = sorted(n for n in names if not n.endswith(".py") and not n.split("/")[0].endswith(".dist-info"))
    static = sorted(f"bankproof/verifier/web/static/{p.name}" for p in (ROOT / "verifier/web/static").iterdir()
                    if p.suffix in (".html", ".js", ".css"))  # fmt: skip
    assert data == sorted(["bankproof/py.typed", "bankproof/verifier/schema/verify-report.schema.json",
                           "bankproof/verifier/triton/sample.ttgir", "bankproof/models/notation/cute_atoms.json",
                           "bankproof/verifier/ptx/measured_forms.json", *static])  # fmt: skip
    assert not any("gpu_checks/results/" in n for n in names)
    assert wheel.stat().st_size < 2_000_000, wheel.stat().st_size
    entry = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "bankproof = bankproof.verifier.cli.main:cli" in entry
    from bankproof.verifier.render import sarif

    meta = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("/METADATA"))).decode()
    urls = dict(
        line.split(": ", 1)[1].split(", ", 1) for line in meta.splitlines() if line.startswith("Project-URL")
    )
    assert urls["Homepage"] == sarif.INFORMATION and sarif.HELP.startswith(
        urls["Homepage"] + "/blob/main/docs/"
    )
    assert urls["Documentation"].endswith("/docs/index.md")
    assert urls["Issues"].startswith(urls["Homepage"])


def test_build_requirement_supports_the_license_field():
    """``license = "Apache-2.0"`` (an SPDX string) needs setuptools >= 77."""
    text = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^license = "Apache-2.0"', text, re.M)
    m = re.search(r'requires = \["setuptools>=(\d+)"\]', text)
    assert m and int(m.group(1)) >= 77


# --- the import graph -------------------------------------------------------------------------
# The tree is the layer diagram: each floor is a folder (or module) prefix, lowest first. A module
# may import its own floor and the floors below it, never one above (upward) or a floor declared
# side by side with its own (sideways).
FLOORS = [
    ("models", ("bankproof.models",)),  # what things are: layouts, notations, the hardware rules
    ("proofs", ("bankproof.proofs",)),  # Z3
    ("gpu_checks", ("bankproof.gpu_checks",)),  # the GPU as judge
    ("results", ("bankproof.verifier.results",)),  # frozen result values
    ("engine", ("bankproof.verifier.engine",)),  # specs, the engines run and agreed, costs, synthesis
    ("ptx", ("bankproof.verifier.ptx",)),  # PTX read once, its evaluator: every kernel's front end
    ("kernel", ("bankproof.verifier.kernel",)),  # any kernel: NVRTC, the PTX machine, its account
    ("triton", ("bankproof.verifier.triton",)),  # the Triton wing: TTGIR, scan, ledger, corpus
    ("api", ("bankproof.verifier.api",)),  # one module per command: values in, results out
    ("render", ("bankproof.verifier.render",)),  # pure functions of results: text, HTML, SVG, SARIF
    ("web", ("bankproof.verifier.web",)),  # the workbench: answers and the server
    ("agents", ("bankproof.verifier.agents",)),  # the MCP server: the commands as tools for agents
    ("cli", ("bankproof.verifier.cli",)),  # arguments, streams, exit codes
    ("package", ("bankproof",)),  # the public face: bankproof, bankproof.testing
]
SIDE_BY_SIDE = {("proofs", "gpu_checks"), ("gpu_checks", "proofs")}


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _layer(module: str) -> int:
    """The floor of ``module``: the most specific prefix that holds it."""
    best = max(
        ((len(p), i) for i, (_, prefixes) in enumerate(FLOORS) for p in prefixes if _under(module, p)),
        default=None,
    )
    assert best is not None, f"{module} is on no floor"
    return best[1]


LAYERS = FLOORS


def _module_file(name: str) -> Path | None:
    if name == "bankproof":
        return ROOT / "bankproof" / "__init__.py"
    parts = name.split(".")[1:]
    base = ROOT / ("bankproof" if parts[0] not in FOLDERS else parts[0])
    rest = parts[1:] if parts[0] in FOLDERS else parts
    for cand in (base.joinpath(*rest).with_suffix(".py"), base.joinpath(*rest, "__init__.py")):
        if cand.exists():
            return cand
    return None


def import_graph() -> dict[str, set[str]]:
    """Every module -> the package modules it imports (anywhere in it, lazy imports included)."""
    graph: dict[str, set[str]] = {}
    names = set(all_modules())
    for name in names:
        tree = ast.parse(_module_file(name).read_text(encoding="utf-8"))
        targets: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for a in node.names:
                    sub = f"{node.module}.{a.name}"
                    targets.add(sub if sub in names else node.module)
        graph[name] = {t for t in targets if t in names and t != name}
    return graph


@pytest.mark.slow
def test_imports_go_one_way():
    """cli -> web -> render -> api -> triton -> engine -> results -> proofs, gpu_checks -> models:
    nothing imports upward or sideways."""
    bad = []
    for mod, targets in import_graph().items():
        for t in targets:
            low, high = _layer(t), _layer(mod)
            pair = (LAYERS[high][0], LAYERS[low][0])
            if low > high or pair in SIDE_BY_SIDE:
                bad.append(f"{mod} ({LAYERS[high][0]}) imports {t} ({LAYERS[low][0]})")
    assert not bad, "\n".join(sorted(bad))


@pytest.mark.slow
def test_no_import_cycle():
    graph = import_graph()
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(m: str, path: list[str]) -> bool:
        state[m] = 1
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                cycle.extend(path[path.index(t) :] + [t] if t in path else [m, t])
                return True
            if t not in state and visit(t, path + [t]):
                return True
        state[m] = 2
        return False

    for m in sorted(graph):
        if m not in state and visit(m, [m]):
            break
    assert not cycle, " -> ".join(cycle)


@pytest.mark.slow
def test_the_graph_test_sees_an_upward_import(monkeypatch):
    """The layer test can fail: an injected models -> verifier edge is reported."""
    graph = import_graph()
    graph["bankproof.models.layout"] = graph["bankproof.models.layout"] | {"bankproof.verifier.engine.spec"}
    monkeypatch.setattr(sys.modules[__name__], "import_graph", lambda: graph)
    with pytest.raises(
        AssertionError, match="bankproof.models.layout \\(models\\) imports bankproof.verifier.engine.spec"
    ):
        test_imports_go_one_way()


@pytest.mark.slow
def test_the_cycle_test_sees_a_cycle(monkeypatch):
    graph = import_graph()
    graph["bankproof.verifier.results"] = graph["bankproof.verifier.results"] | {
        "bankproof.verifier.engine.check"
    }
    monkeypatch.setattr(sys.modules[__name__], "import_graph", lambda: graph)
    with pytest.raises(AssertionError, match="bankproof.verifier.results"):
        test_no_import_cycle()


def test_the_gpu_side_loads_without_z3():
    """The device image has no z3: the CLI, the GPU runner and the package import without it."""
    code = (
        "import sys, importlib\n"
        "sys.modules['z3'] = None  # any import of z3 now fails\n"
        "for m in ('bankproof', 'bankproof.verifier.cli.main', 'bankproof.verifier.api.gpu',\n"
        "          'bankproof.gpu_checks.layout_runs', 'bankproof.gpu_checks.measure'):\n"
        "    importlib.import_module(m)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/", timeout=120)
    assert out.stdout.strip() == "ok", out.stderr[-2000:]


def test_device_shim_imports_from_the_repository_root():
    """The device scripts import the package through ``lab/gpu/device_env.sh`` (no pip there),
    run from the repository root, whose ``bankproof/`` folder must not shadow the shim."""
    code = (
        "import sys; sys.meta_path = [f for f in sys.meta_path if 'ditable' not in repr(f)]\n"
        "import bankproof.gpu_checks.layout_runs as m, bankproof.verifier.api.gpu\n"
        "print(m.__file__)\n"
    )
    out = subprocess.run(
        ["bash", "-c", f'source lab/gpu/device_env.sh && "{sys.executable}" -c "$0"', code],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("/bankproof/gpu_checks/layout_runs.py")
    assert not out.stdout.strip().startswith(str(ROOT))


# --- one target seam ----------------------------------------------------------------------------
TARGET_MODULE = ROOT / "models" / "target.py"
VENDOR = re.compile(r"(?<![A-Za-z0-9])(amd|nvidia)(?![A-Za-z0-9])", re.I)
# Triton's own spellings of attribute kinds (what a user pastes) and the driver's tool, not a
# vendor named by bankproof: the notation readers must match them as written.
FOREIGN_SPELLINGS = re.compile(
    r"(?:#ttg\.)?(?:amd_(?:mfma|wmma|rotating_shared)|nvidia_mma)\b|nvidia-smi"
    r"|nvidia[-.]cuda[\w-]*|nvidia-cutlass"  # the PyPI wheels (and their import names) of the cuda extra
)


def vendor_mentions(text: str) -> list[str]:
    """Every place ``text`` names a vendor (code, strings, comments and docstrings alike), less
    Triton's own attribute spellings."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in VENDOR.finditer(FOREIGN_SPELLINGS.sub("", line)):
            out.append(f"{n}: {m.group(0)}: {line.strip()[:100]}")
    return out


def test_no_vendor_name_outside_the_target_module():
    """Only ``models/target.py`` knows which vendors exist: every other module of the package (and
    its file name) goes through it, so a new arch is one entry there."""
    bad = []
    for folder in ("bankproof", *FOLDERS):
        for path in (ROOT / folder).rglob("*.py"):
            if path == TARGET_MODULE:
                continue
            rel = path.relative_to(ROOT)
            if VENDOR.search(path.stem.replace("_", " ")):
                bad.append(f"{rel}: the file name names a vendor")
            bad += [f"{rel}:{hit}" for hit in vendor_mentions(path.read_text(encoding="utf-8"))]
    assert not bad, "\n".join(bad)


def test_the_vendor_test_sees_a_vendor():
    assert vendor_mentions("if arch.startswith('gfx'):  # AMD\n") == [
        "1: AMD: if arch.startswith('gfx'):  # AMD"
    ]
    assert vendor_mentions("check_amd_access(x)") and vendor_mentions('"nvidia"')
    assert vendor_mentions('kind = "#ttg.amd_mfma<{...}>"; k = "#ttg.nvidia_mma<{}>"') == []


def test_public_names_are_all():
    """``bankproof.__all__`` is exactly its public names: each resolves, none is missing."""
    import types

    import bankproof

    public = {n for n in dir(bankproof) if not n.startswith("_")}
    public = {n for n in public if not isinstance(getattr(bankproof, n), types.ModuleType)}
    assert sorted(bankproof.__all__) == sorted(public)
    for name in bankproof.__all__:
        assert getattr(bankproof, name) is not None, name


def test_every_api_module_says_what_it_offers():
    """Each ``verifier/api`` module and ``bankproof.testing`` has an ``__all__`` whose names
    resolve, and every name another module imports from an api module is in its ``__all__``."""
    import ast
    import importlib

    offered = {}
    for path in sorted((ROOT / "verifier" / "api").glob("*.py")):
        name = f"bankproof.verifier.api.{path.stem}" if path.stem != "__init__" else "bankproof.verifier.api"
        mod = importlib.import_module(name)
        assert isinstance(getattr(mod, "__all__", None), list), name
        assert all(hasattr(mod, n) for n in mod.__all__), name
        offered[name] = set(mod.__all__)
    assert importlib.import_module("bankproof.testing").__all__
    missing = []
    for folder in ("bankproof", *FOLDERS):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module in offered and path.parent.name != "api":
                    missing += [f"{path.name}: {node.module}.{a.name}" for a in node.names
                                if a.name not in offered[node.module]]  # fmt: skip
    assert not missing, "\n".join(missing)


def test_no_module_over_400_lines():
    long = []
    for folder in ("bankproof", *FOLDERS):
        for path in (ROOT / folder).rglob("*.py"):
            n = len(path.read_text(encoding="utf-8").splitlines())
            if n > 400:
                long.append(f"{path.relative_to(ROOT)}: {n} lines")
    assert not long, "\n".join(long)


@pytest.mark.slow
def test_no_private_name_is_imported_from_another_module():
    """What crosses a module boundary has a public name: no ``from bankproof.x import _name``."""
    bad = []
    for folder in ("bankproof", *FOLDERS):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bankproof"):
                    bad += [f"{path.relative_to(ROOT)}: {node.module}.{a.name}" for a in node.names
                            if a.name.startswith("_") and not a.name.startswith("__")]  # fmt: skip
    assert not bad, "\n".join(bad)
