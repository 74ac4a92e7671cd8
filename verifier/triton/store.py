"""The corpus's results directory: one file per compile, keyed by what decides its result, so a rerun
computes only what changed and an interrupted run resumes where it stopped.

The key hashes the kernel's source as Triton sees it (``JITFunction.cache_key``: the function and
every ``@triton.jit`` function it calls), the configuration, the arch, Triton's version, and
bankproof's version with a digest of its analysis code (a changed scan recomputes). Each result is
written whole to a temporary file and renamed into place, so a reader never sees half a file and
two writers of one key leave one complete file. Timeouts and crashed workers are not stored: the
next run tries them again.

>>> import tempfile
>>> s = ResultStore(tempfile.mkdtemp())
>>> s.save("ab" * 32, CorpusEntry(config="k", arch="sm90", error="no compiler")); s.load("ab" * 32).error
'no compiler'
>>> s.load("cd" * 32) is None
True
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path

from bankproof.models.errors import InputError
from bankproof.models.version import VERSION
from bankproof.verifier.triton.corpus_records import CorpusEntry, read_entry

TRANSIENT = ("did not finish within", "crashed the worker", "worker crashed")  # not stored: retried


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """A digest of the code whose output the store keeps (models, proofs, the Triton wing)."""
    root = Path(__file__).resolve().parents[2]
    h = hashlib.sha256(VERSION.encode())
    for sub in ("models", "proofs", "verifier/triton", "verifier/engine"):
        for p in sorted((root / sub).rglob("*.py")):
            h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def job_key(config: dict, arch: str, kernel_key: str, triton_version: str) -> str:
    """The store key of one (configuration, arch) compile."""
    what = {"kernel": kernel_key, "config": config, "arch": arch, "triton": triton_version,
            "code": code_digest()}  # fmt: skip
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()


class ResultStore:
    """Entries by key under ``root/KEY[:2]/KEY.json``."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        if self.root.exists() and not self.root.is_dir():
            raise InputError("triton corpus", "--results", "is not a directory", str(root))
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=self.root, prefix=".probe-"):
                pass
        except OSError as e:
            why = f"cannot be written ({e.strerror})"
            raise InputError("triton corpus", "--results", why, str(root)) from None

    def _path(self, key: str) -> Path:
        if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
            raise ValueError(f"not a store key: {key!r}")
        return self.root / key[:2] / f"{key}.json"

    def load(self, key: str) -> CorpusEntry | None:
        """The stored entry (read back as a record, every field checked), or ``None`` where there
        is none or it is not one: computed again."""
        try:
            return read_entry(json.loads(self._path(key).read_text()))
        except (OSError, ValueError, RecursionError):  # absent, unreadable, or not an entry (InputError)
            return None

    def save(self, key: str, entry: CorpusEntry) -> None:
        if any(t in (entry.error or "") for t in TRANSIENT):
            return
        path = self._path(key)
        path.parent.mkdir(exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "w") as fh:
            json.dump(entry.to_dict(), fh)  # key order kept: a stored entry prints as a computed one
        os.replace(tmp, path)

    def keys(self) -> list[str]:
        return sorted(p.stem for p in self.root.glob("??/*.json"))


__all__ = ["ResultStore", "code_digest", "job_key"]
