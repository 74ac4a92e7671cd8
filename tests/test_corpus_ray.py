"""The corpus at scale: Ray as the engine (the same answer as the local engine, byte for byte), the
per-worker Triton caches under concurrency, a compile that never finishes, the results directory
(an interrupted run resumes and computes nothing twice), and the clear message without Ray."""

from __future__ import annotations

import json
import sys

import pytest

pytest.importorskip("triton")
ray = pytest.importorskip("ray")

from bankproof.models.errors import InputError  # noqa: E402
from bankproof.verifier.results import plain  # noqa: E402
from bankproof.verifier.triton import corpus  # noqa: E402
from bankproof.verifier.triton.corpus_configs import builtin_configs  # noqa: E402
from bankproof.verifier.triton.results import CorpusResult  # noqa: E402

pytestmark = pytest.mark.ray

HANG = """
import triton
import triton.language as tl

@triton.jit
def forever(x_ptr, N: tl.constexpr):
    acc = tl.load(x_ptr)
    for i in tl.static_range(N):
        acc = acc * 3 + i
    tl.store(x_ptr, acc)

@triton.jit
def copy(x_ptr, y_ptr, B: tl.constexpr):
    r = tl.arange(0, B)
    tl.store(y_ptr + r, tl.load(x_ptr + r))

CONFIGS = [
    {"name": "never", "kernel": "forever", "signature": {"x_ptr": "*fp32", "N": "constexpr"},
     "constexprs": {"N": 10000000}},
    {"name": "copy64", "kernel": "copy", "signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "B": "constexpr"},
     "constexprs": {"B": 64}},
    {"name": "copy128", "kernel": "copy", "signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "B": "constexpr"},
     "constexprs": {"B": 128}},
]
"""


@pytest.fixture(scope="module")
def cluster():
    """One local Ray of 2 CPUs for the module (starting Ray costs seconds)."""
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def _json(entries: list[dict]) -> str:
    return CorpusResult(1, tuple(entries), (), (), tuple(corpus.unchecked(entries))).to_json()


def test_ray_gives_the_local_answer(cluster, capsys):
    """>= 40 compiles (14 configurations x sm80/sm90/sm100): the same JSON from both engines."""
    configs = builtin_configs()[:14]
    archs = ["sm80", "sm90", "sm100"]
    local = corpus.run_corpus(configs, archs, workers=2)
    on_ray = corpus.run_corpus(configs, archs, engine="ray")
    assert len(local) == 42 and sum(e.compiled for e in local) >= 40
    assert _json(on_ray) == _json(local)
    with capsys.disabled():
        print(f"\n  Ray and local engines: {len(local)} compiles, byte-identical JSON")


def test_concurrent_workers_keep_their_caches_apart(cluster):
    """Two Ray workers compile the same kernels at once, each into its own Triton cache slot: no
    cache error, every duplicate's result identical (no mixed artifacts)."""
    from bankproof.verifier.triton.dispatch import run

    configs = builtin_configs()[:4]
    jobs = [(c, "sm90", None) for c in configs for _ in range(2)]
    stats: list = []
    entries = run(jobs, engine="ray", address=None, workers=0, limit_s=300, stats=stats)
    assert all(e.compiled for e in entries), [e.error for e in entries]
    for a, b in zip(entries[::2], entries[1::2], strict=True):
        assert json.dumps(plain(a), sort_keys=True) == json.dumps(plain(b), sort_keys=True)
    assert len({s["cache_dir"] for s in stats}) == 2 and len({s["ray_worker_pid"] for s in stats}) == 2


@pytest.mark.parametrize("engine", ["local", "ray"])
def test_a_compile_that_never_finishes_is_reported(cluster, tmp_path, engine):
    kernels = tmp_path / "k.py"
    kernels.write_text(HANG)
    cfgs = corpus.load_kernels_file(str(kernels)).CONFIGS
    entries = corpus.run_corpus(cfgs, ["sm80"], str(kernels), workers=2, limit_s=8, engine=engine)
    assert entries[0].error == "compile did not finish within 8 s"
    assert [e.compiled for e in entries[1:]] == [True, True]


def test_an_interrupted_run_resumes_and_recomputes_nothing(cluster, tmp_path):
    configs = builtin_configs()[:6]
    store = tmp_path / "results"
    counts: list[int] = []

    def stop_after_three(done: int, total: int) -> None:
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        corpus.run_corpus(configs, ["sm90"], workers=1, progress=stop_after_three, results_dir=str(store))
    stored = len(list(store.glob("??/*.json")))
    assert stored >= 3

    def count(done: int, total: int) -> None:
        counts.append(total)

    again = corpus.run_corpus(configs, ["sm90"], engine="ray", progress=count, results_dir=str(store))
    assert counts and counts[-1] == 6 - stored  # only what was not stored was compiled
    counts.clear()
    third = corpus.run_corpus(configs, ["sm90"], workers=2, progress=count, results_dir=str(store))
    assert counts == [] and _json(third) == _json(again)  # nothing computed, the same answer
    fresh = corpus.run_corpus(configs, ["sm90"], workers=2)
    assert _json(fresh) == _json(third)


def test_without_ray_one_clear_message(monkeypatch):
    from bankproof.verifier.triton import ray_engine

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(InputError, match=r"pip install 'bankproof\[ray\]'"):
        ray_engine.connect(None)


def test_cli_flags(cluster, tmp_path, capsys):
    """--engine ray with --results and --expand through the command; refusals exit 2."""
    from bankproof.verifier.cli.main import main

    kernels = tmp_path / "k.py"
    kernels.write_text(HANG.split("CONFIGS")[0] + 'CONFIGS = [{"name": "c", "kernel": "copy", "signature": '
                       '{"x_ptr": "*fp32", "y_ptr": "*fp32", "B": "constexpr"}, "constexprs": {"B": 64}}]\n')  # fmt: skip
    args = ["triton", "corpus", "--arch", "sm80", "--kernels", str(kernels), "--results", str(tmp_path / "r"),
            "--expand", "5", "--allow-unknown"]  # fmt: skip
    assert main([*args, "--engine", "ray"]) == 0
    err = capsys.readouterr().err
    assert "compiled 5/5" in err and "triton corpus: 5 configurations, 5 compiled" in err
    assert main(args) == 0  # all stored: nothing compiled
    err = capsys.readouterr().err
    assert "compiled" not in err.split("triton corpus:")[0]
    for bad, why in (
        (["--address", "h:1"], "--address is for --engine ray"),
        (["--expand", "-1"], "--expand"),
    ):
        assert main([*args[:-3], "--allow-unknown", *bad]) == 2  # (an option of one value is given once)
        assert why in capsys.readouterr().err


def test_a_ray_worker_that_dies_is_retried_once_then_reported(cluster, tmp_path):
    """The task's own process dies (an OOM kill, a lost node): Ray runs it again once; dying again it
    is reported, and the other jobs complete."""
    from bankproof.verifier.triton import ray_engine

    marker = tmp_path / "attempts"

    def dies_on_job_one(function, job, limit_s):
        import os

        if job == 1:
            with open(marker, "a") as fh:
                fh.write("x")
            os._exit(1)
        return "ok", job * 10, {}

    got: dict = {}
    ray_engine.run([0, 1, 2], "unused", address=None, limit_s=30, on_lost=lambda job, why: why,
                   on_result=got.__setitem__, task=dies_on_job_one)  # fmt: skip
    assert got[0] == 0 and got[2] == 20
    assert got[1].startswith("crashed the worker twice") and marker.read_text() == "xx"


def test_bad_results_dir_and_unreachable_cluster_are_refused(tmp_path, monkeypatch):
    from bankproof.verifier.triton import ray_engine
    from bankproof.verifier.triton.store import ResultStore

    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(InputError, match="--results is not a directory"):
        ResultStore(f)

    class Down:
        @staticmethod
        def is_initialized():
            return False

        @staticmethod
        def init(**kw):
            raise ConnectionError("no cluster at 10.0.0.1:6379")

    monkeypatch.setitem(sys.modules, "ray", Down)
    with pytest.raises(InputError, match="could not start or join Ray .ConnectionError"):
        ray_engine.connect("10.0.0.1:6379")
