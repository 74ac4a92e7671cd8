"""The corpus's worker pool: every job answered, in order; a job past its time limit or one that
kills its worker is reported (and a fresh worker carries on), never waited for."""

from __future__ import annotations

import time

import pytest
from bankproof.verifier.triton.compile_pool import run_jobs

pytestmark = pytest.mark.compile


def test_jobs_answered_in_order_across_workers():
    jobs = list(range(12))
    assert run_jobs(jobs, "math.factorial", workers=3, limit_s=30) == [
        __import__("math").factorial(j) for j in jobs
    ]


def test_a_hanging_job_is_reported_and_the_rest_finish():
    t0 = time.monotonic()
    out = run_jobs(
        [0, 60, 0, 0], "time.sleep", workers=2, limit_s=2.0, on_lost=lambda job, why: f"{job}: {why}"
    )
    assert out == [None, "60: did not finish within 2 s", None, None]
    assert time.monotonic() - t0 < 30


def test_a_crashing_job_is_reported():
    out = run_jobs([4, "x", 9], "math.sqrt", workers=1, limit_s=30, on_lost=lambda job, why: why)
    assert out == [2.0, "crashed the worker process", 3.0]


def test_in_process_when_given_a_callable():
    assert run_jobs([1, 2], lambda j: j * 10, workers=4, limit_s=1) == [10, 20]
