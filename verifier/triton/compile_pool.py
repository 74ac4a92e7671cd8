"""Compile corpus jobs in worker processes with a time limit on each job.

``concurrent.futures`` cannot stop a job that hangs (a compile stuck in Triton's C++ passes never
returns to Python), so each worker is a subprocess running :func:`serve`: it imports Triton once,
then compiles job after job read from its stdin. The parent gives each job ``limit_s`` seconds;
a worker past its limit is killed, its job reported (``on_lost(job, why)``), and a fresh worker
takes its place; so is a worker that dies (a crash in Triton aborts the process).

>>> run_jobs([], lambda job: job, workers=2, limit_s=1.0)
[]
"""

from __future__ import annotations

import base64
import os
import pickle
import selectors
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path


def _send(stream, obj: object) -> None:
    stream.write(base64.b64encode(pickle.dumps(obj)) + b"\n")
    stream.flush()


def receive_line(line: bytes) -> object:
    return pickle.loads(base64.b64decode(line))


def cache_slot() -> str:
    """A Triton cache directory this process alone writes to while it lives: slot ``i`` of the
    cache root (``BANKPROOF_TRITON_CACHE``, else ``~/.cache/bankproof/triton``), held by an
    exclusive lock on ``slot-i.lock``. Concurrent writers of one Triton cache have mixed one
    writer's binary with another's metadata (Triton PR #11319); a slot is never shared, and a later
    worker reuses a free slot's compiled kernels. Slots are per checkout of bankproof (a compile
    cached by another checkout would carry that checkout's file paths in its locations)."""
    import fcntl
    import hashlib

    base = Path(os.environ.get("BANKPROOF_TRITON_CACHE") or Path.home() / ".cache" / "bankproof" / "triton")
    # per checkout: Triton's cache key ignores a kernel's file path, and a hit would bring back the
    # locations (file paths) of the checkout that compiled it
    root = base / hashlib.sha256(str(Path(__file__).resolve().parents[2]).encode()).hexdigest()[:12]
    root.mkdir(parents=True, exist_ok=True)
    for i in range(4096):
        fd = os.open(root / f"slot-{i}.lock", os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        _HELD.append(fd)  # held until the process exits
        return str(root / f"slot-{i}")
    raise RuntimeError(f"no free Triton cache slot under {root}")


_HELD: list[int] = []


def serve(function: Callable) -> None:
    """Worker loop: each stdin line is a pickled job; each stdout line ``function(job)`` pickled.
    The worker compiles into a Triton cache of its own (:func:`cache_slot`)."""
    import signal

    os.environ["TRITON_CACHE_DIR"] = os.environ.get("BANKPROOF_TRITON_SLOT") or cache_slot()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # the parent's CLI blocks it for its watcher
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # whatever the job prints must not corrupt the protocol
    for line in stdin:
        _send(stdout, function(receive_line(line)))


class PoolWorker:
    def __init__(self, target: str, env: dict[str, str] | None = None):
        code = f"from {target.rsplit('.', 1)[0]} import {target.rsplit('.', 1)[1]} as f; " \
               "from bankproof.verifier.triton.compile_pool import serve; serve(f)"  # fmt: skip
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONSAFEPATH": "1", **(env or {})},
        )  # fmt: skip
        self.job: int | None = None
        self.started = 0.0

    def give(self, index: int, job: object) -> None:
        self.job, self.started = index, time.monotonic()
        _send(self.proc.stdin, job)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()


def run_jobs(
    jobs: list,
    function: Callable | str,
    workers: int,
    limit_s: float,
    on_lost: Callable[[object, str], object] = lambda job, why: why,
    progress: Callable[[int, int], None] | None = None,
    on_result: Callable[[int, object], None] | None = None,
) -> list:
    """``[function(job) for job in jobs]`` across ``workers`` processes; a job past ``limit_s``
    (or whose worker dies) gives ``on_lost(job, why)``. ``function`` is called in-process when it
    is a callable (tests, tiny runs), or named ``"module.function"`` to run in workers.
    ``on_result(index, result)`` and then ``progress(done, total)`` are called as each job ends."""
    tick = progress or (lambda done, total: None)
    keep = on_result or (lambda index, result: None)
    if callable(function):
        out = []
        for i, j in enumerate(jobs):
            out.append(function(j))
            keep(i, out[-1])
            tick(len(out), len(jobs))
        return out
    done = 0
    results: list = [None] * len(jobs)
    pending = list(range(len(jobs)))[::-1]
    sel = selectors.DefaultSelector()
    pool: list[PoolWorker] = []

    def start() -> None:
        if not pending:
            return
        w = PoolWorker(function)
        pool.append(w)
        sel.register(w.proc.stdout, selectors.EVENT_READ, w)
        i = pending.pop()
        w.give(i, jobs[i])

    def lose(w: PoolWorker, why: str) -> None:
        nonlocal done
        results[w.job] = on_lost(jobs[w.job], why)
        keep(w.job, results[w.job])
        done += 1
        tick(done, len(jobs))
        w.job = None
        sel.unregister(w.proc.stdout)
        pool.remove(w)
        w.kill()
        start()

    for _ in range(min(workers, len(jobs))):
        start()
    try:
        while any(w.job is not None for w in pool):
            now = time.monotonic()
            busy = [w for w in pool if w.job is not None]
            wait = max(0.05, min(w.started + limit_s - now for w in busy))
            for key, _ in sel.select(timeout=wait):
                w = key.data
                line = w.proc.stdout.readline()
                if not line:  # the worker died: report its job, start another
                    lose(w, "crashed the worker process")
                    continue
                results[w.job] = receive_line(line)
                keep(w.job, results[w.job])
                done += 1
                tick(done, len(jobs))
                w.job = None
                if pending:
                    i = pending.pop()
                    w.give(i, jobs[i])
                else:  # nothing left for it
                    sel.unregister(w.proc.stdout)
                    pool.remove(w)
                    w.kill()
            now = time.monotonic()
            for w in [w for w in pool if w.job is not None and now - w.started > limit_s]:
                lose(w, f"did not finish within {limit_s:g} s")
    finally:
        for w in pool:
            w.kill()
    return results
