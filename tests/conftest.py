"""Shared test settings: derandomized hypothesis in CI, paths to the seeds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT.parent / "shared" / "seeds"

settings.register_profile("ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")
# The CuTe DSL reads its target once, when first imported: the oracles in this process (the
# warpgroup atoms exist on sm_90a only) want sm_90a; lab/cute_desc_oracle.py (sm_100a) runs in its own.
os.environ.setdefault("CUTE_DSL_ARCH", "sm_90a")


@pytest.fixture(scope="session")
def corpus_entries():
    """The built-in Triton corpus compiled once per session for sm80, sm90 and sm100 (needs triton)."""
    import importlib.util

    if importlib.util.find_spec("triton") is None:
        pytest.skip("needs the triton extra")
    from bankproof.verifier.triton import corpus

    return corpus.run_corpus(corpus.builtin_configs(), ["sm80", "sm90", "sm100"])


@pytest.fixture(autouse=True, scope="session")
def _own_config_home(tmp_path_factory):
    """The results store's key file in a folder of the test session's, never the user's
    ``~/.config`` (child processes inherit it)."""
    home = tmp_path_factory.mktemp("config-home")
    old = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(home)
    yield home
    if old is None:
        os.environ.pop("XDG_CONFIG_HOME", None)
    else:
        os.environ["XDG_CONFIG_HOME"] = old


SLOW_KINDS = ("compile", "ray", "browser", "gpu_replay", "fuzz")  # each is slow too


def pytest_collection_modifyitems(config, items):
    """A test of a slow kind is ``slow``: ``pytest -m "not slow"`` (``make fast``) leaves them all out."""
    for item in items:
        if any(item.get_closest_marker(k) for k in SLOW_KINDS):
            item.add_marker(pytest.mark.slow)


def _remember_sass() -> None:
    """Every module's SASS built once per test session: many test modules analyse the same
    kernels (the examples, the GPU records' PTX, the Triton corpora), and building the SASS is most
    of their time. The product keeps the last few (``sass.disassemble_cached``); a session keeps all."""
    from bankproof.verifier.kernel import sass

    built: dict = {}
    build = sass.disassemble

    def disassemble(ptx: str, arch: str, seconds: float = 120.0):
        key = (ptx, arch)
        if key not in built:
            d = build(ptx, arch, seconds)
            if d is None or d.error:
                return d  # (a failure, a time-out, is not remembered)
            built[key] = d
        return built[key]

    sass.disassemble = disassemble


_remember_sass()
