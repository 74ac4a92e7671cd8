"""Ray as the engine for many machines: each (configuration, arch) compile-and-scan is a Ray task
(``num_cpus=1``); Ray schedules the tasks over the cluster, moves jobs and results, and retries a
task once when its worker process dies (``max_retries=1``); a task that dies twice is reported. No
scheduling, transport or retry of our own.

Inside a Ray worker the compile runs in a subprocess of that worker (started on its first task and
reused), so the per-compile time limit holds (a compile stuck in Triton's C++ passes is killed and
reported, the worker carries on) and Triton is imported once per worker; the subprocess compiles into
a Triton cache slot that the Ray worker holds alone (:func:`~bankproof.verifier.triton.compile_pool.
cache_slot`). Results stream back as tasks finish (at most a window of tasks is in flight).

    ray.init(num_cpus=2)            # or: bankproof triton corpus --engine ray --address HOST:6379

>>> _peak_kb(-1)  # a process that is not there has no peak
0
"""

from __future__ import annotations

import os
import resource
import selectors
from collections.abc import Callable

from bankproof.models.errors import InputError

_WORKER = None  # this Ray worker's compile subprocess
_SLOT: str | None = None  # the Triton cache slot this Ray worker holds


def _peak_kb(pid: int) -> int:
    """Peak resident memory of process ``pid`` in KiB (Linux ``VmHWM``; 0 where unknown)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _task(function: str, job: object, limit_s: float) -> tuple[str, object, dict]:
    """One job in this Ray worker's compile subprocess, at most ``limit_s`` seconds:
    ``("ok", result, stats)`` or ``("lost", why, stats)``."""
    global _WORKER, _SLOT
    from bankproof.verifier.triton.compile_pool import PoolWorker, cache_slot, receive_line

    if _SLOT is None:
        _SLOT = cache_slot()
    if _WORKER is None or _WORKER.proc.poll() is not None:
        _WORKER = PoolWorker(function, {"TRITON_CACHE_DIR": _SLOT, "BANKPROOF_TRITON_SLOT": _SLOT})
    w = _WORKER
    w.give(0, job)
    sel = selectors.DefaultSelector()
    sel.register(w.proc.stdout, selectors.EVENT_READ)
    ready = sel.select(timeout=limit_s)
    sel.close()
    line = w.proc.stdout.readline() if ready else b""
    stats = {"cache_dir": _SLOT, "ray_worker_pid": os.getpid(), "compile_peak_kb": _peak_kb(w.proc.pid),
             "ray_worker_peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}  # fmt: skip
    if line:
        return "ok", receive_line(line), stats
    w.kill()
    _WORKER = None
    why = f"did not finish within {limit_s:g} s" if not ready else "crashed the worker process"
    return "lost", why, stats


CONNECT_S = 5.0  # how long the cluster's address may take to answer before it is called unreachable


def reachable(address: str | None) -> None:
    """Refuse (naming ``--address``) a ``HOST:PORT`` that does not accept a connection within
    :data:`CONNECT_S` (``ray.init`` would wait on it for minutes); ``auto``, ``local`` and
    ``ray://`` client addresses are left to Ray.

    >>> try:
    ...     reachable("127.0.0.1:1")
    ... except ValueError as e:
    ...     print(e)
    triton corpus: --address does not answer (ConnectionRefusedError), got 127.0.0.1:1
    """
    import socket

    if not address or address in ("auto", "local") or "://" in address:
        return
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536 or not host:
        raise InputError("triton corpus", "--address", "must be HOST:PORT (or auto)", address)
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_S):
            pass
    except OSError as e:
        raise InputError(
            "triton corpus", "--address", f"does not answer ({type(e).__name__})", address
        ) from None


def connect(address: str | None):
    """The ``ray`` module, connected (to ``address``, or a local Ray started here), or one clear
    error when Ray is not installed."""
    try:
        import ray
    except ImportError:
        raise InputError("triton corpus", "--engine", "ray needs Ray, the optional extra: "
                         "pip install 'bankproof[ray]'", "ray") from None  # fmt: skip
    if not ray.is_initialized():
        reachable(address)
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        except Exception as e:  # noqa: BLE001 - Ray raises ConnectionError, RuntimeError, ValueError, ...
            first = str(e).splitlines()[0][:160] if str(e) else ""
            why = f"could not start or join Ray ({type(e).__name__}: {first})"
            raise InputError("triton corpus", "--address", why, address or "a local Ray") from None
    return ray


def run(jobs: list, function: str, *, address: str | None, limit_s: float,
        on_lost: Callable[[object, str], object], on_result: Callable[[int, object], None],
        progress: Callable[[int, int], None] | None = None, stats: list | None = None,
        task: Callable = _task) -> None:  # fmt: skip
    """Every job as a Ray task (``task``: :func:`_task`); ``on_result(index, result)`` as each
    comes back."""
    if not jobs:
        return
    ray = connect(address)
    remote = ray.remote(num_cpus=1, max_retries=1)(task)
    window = max(4, 2 * int(ray.cluster_resources().get("CPU", 1)))
    inflight: dict = {}
    nxt = done = 0
    try:
        while nxt < len(jobs) or inflight:
            while nxt < len(jobs) and len(inflight) < window:
                inflight[remote.remote(function, jobs[nxt], limit_s)] = nxt
                nxt += 1
            ready, _ = ray.wait(list(inflight), num_returns=1)
            i = inflight.pop(ready[0])
            try:
                kind, value, st = ray.get(ready[0])
            except ray.exceptions.RayError as e:  # its worker died, and again on the retry
                kind, value, st = "lost", f"crashed the worker twice ({type(e).__name__})", {}
            on_result(i, value if kind == "ok" else on_lost(jobs[i], value))
            if stats is not None:
                stats.append(st)
            done += 1
            if progress:
                progress(done, len(jobs))
    finally:
        for ref in inflight:
            ray.cancel(ref, force=True)


__all__ = ["connect", "run"]
