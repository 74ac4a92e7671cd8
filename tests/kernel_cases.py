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


def analyse_case(c: dict, ptx: str | None = None, data: bool = False):
    """``bankproof kernel`` on a case: its PTX (compiled here, or ``ptx`` as recorded) and launch;
    with ``data``, the buffers as the launch had them (:func:`buffers_of`)."""
    from bankproof.verifier.api.kernel import cxx_params, launch_of, with_buffers
    from bankproof.verifier.kernel.analyse import analyse, source_from_ptx

    text = (Path(c.get("folder", str(EXAMPLES))) / c["source"]).read_text()
    src = source_from_ptx(
        ptx if ptx is not None else ptx_of(c), c["source"], c.get("kernel", c["name"]), "cuda"
    )
    names = cxx_params(text, src.code.name)
    args = {str(names.get(k, k)): v for k, v in c.get("args", {}).items()}
    launch = launch_of(c["block"], 1, (0, 0, 0), c.get("dynamic_smem", 0), args)
    launch = with_buffers(launch, src, names, buffers_of(c) if data else None)
    return analyse(src, launch)


DATA = EXAMPLES / "data"  # kernels whose control flow and addresses follow the data a launch loads


def data_of(spec: dict):
    """The values a ``data`` entry of a case describes (see examples/cuda/data/cases.toml)."""
    import numpy as np

    dtype = np.dtype(spec["dtype"])
    if "values" in spec:
        return np.array(spec["values"], dtype=dtype)
    rng = np.random.default_rng(spec.get("seed", 0))
    lo, hi = spec["random"] if "random" in spec else spec["offsets"]
    drawn = rng.integers(lo, hi, size=spec["count"], dtype=np.int64, endpoint=False)
    if "offsets" in spec:
        drawn = np.concatenate([[0], np.cumsum(drawn)])
    return drawn.astype(dtype)


def buffers_of(c: dict) -> dict:
    """Every pointer argument's bytes as the launch has them: the case's data from the start, zeros
    after it (by parameter name, as the case names them)."""
    import numpy as np

    out = {}
    for name, size in c.get("buffers", {}).items():
        raw = np.zeros(size, dtype=np.uint8)
        spec = c.get("data", {}).get(name)
        if spec is not None:
            data = np.frombuffer(data_of(spec).tobytes(), dtype=np.uint8)
            raw[: len(data)] = data
        out[name] = raw
    return out
