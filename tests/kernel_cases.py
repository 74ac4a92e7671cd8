"""The CUDA examples (examples/cuda/cases.toml) for the tests: each compiled once per test run by
NVRTC (a few in parallel: a CuTe GEMM takes about 20 s) and analysed with its launch."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "cuda"


PUBLIC = EXAMPLES / "public"  # public kernels nobody here wrote (llm.c through NVRTC, numba's PTX)


def cases(folder: Path = EXAMPLES) -> list[dict]:
    return [{**c, "folder": str(folder)} for c in tomllib.loads((folder / "cases.toml").read_text())["case"]]


def case(name: str, folder: Path = EXAMPLES) -> dict:
    return next(c for c in cases(folder) if c["name"] == name)


def have_nvrtc() -> bool:
    try:
        from cuda.bindings import nvrtc  # noqa: F401
    except ImportError:
        return False
    return True


@cache
def _module(source: str, defines: tuple, folder: str = str(EXAMPLES)) -> tuple:
    from bankproof.verifier.kernel import nvrtc

    text = (Path(folder) / source).read_text()
    if source.endswith(".ptx"):  # another compiler's PTX, as it wrote it
        return text, text
    return nvrtc.compile_ptx(text, source, "sm90", (), dict(defines), folder), text


def compile_all() -> None:
    """Compile every distinct (source, defines) of the cases, two at a time."""
    keys = {
        (c["source"], tuple(sorted(c.get("defines", {}).items())))
        for c in cases()
        if c["source"].endswith(".cu")
    }
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda k: _module(*k), sorted(keys)))


def ptx_of(c: dict) -> str:
    return _module(c["source"], tuple(sorted(c.get("defines", {}).items())), c.get("folder", str(EXAMPLES)))[
        0
    ]


def analyse_case(c: dict, ptx: str | None = None):
    """``bankproof kernel`` on a case: its PTX (compiled here, or ``ptx`` as recorded) and launch."""
    from bankproof.verifier.api.kernel import cxx_params, launch_of
    from bankproof.verifier.kernel.analyse import analyse, source_from_ptx

    text = (Path(c.get("folder", str(EXAMPLES))) / c["source"]).read_text()
    src = source_from_ptx(
        ptx if ptx is not None else ptx_of(c), c["source"], c.get("kernel", c["name"]), "cuda"
    )
    names = cxx_params(text, src.code.name)
    args = {str(names.get(k, k)): v for k, v in c.get("args", {}).items()}
    return analyse(src, launch_of(c["block"], 1, (0, 0, 0), c.get("dynamic_smem", 0), args))
