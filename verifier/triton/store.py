"""The corpus's results directory: one file per compile, keyed by what decides its result, so a rerun
computes only what changed and an interrupted run resumes where it stopped.

The key hashes the kernel's source as Triton sees it (``JITFunction.cache_key``: the function and
every ``@triton.jit`` function it calls), the configuration, the arch, Triton's version, and
bankproof's version with a digest of its analysis code (a changed scan recomputes). Each result is
written whole to a temporary file and renamed into place, so a reader never sees half a file and
two writers of one key leave one complete file. Timeouts and crashed workers are not stored: the
next run tries them again.

A stored file cannot lie: it carries its key and a digest of its key and content, is read only when
it is a regular file within :data:`MAX_BYTES`, is decoded field by field into a record, and its
numbers must agree with each other (:func:`inconsistency`); one that fails is computed again, and
named in :attr:`ResultStore.refused` (the corpus prints each on stderr and counts them).

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
from bankproof.models.files import json_value, read_text
from bankproof.models.version import VERSION
from bankproof.verifier.triton.corpus_records import CorpusEntry, read_entry

TRANSIENT = ("did not finish within", "crashed the worker", "worker crashed")  # not stored: retried
SCHEMA = 2  # a stored file: {"schema", "key", "digest", "entry"}
MAX_BYTES = 64 << 20  # one stored entry (the largest corpus entries are a few hundred KB)


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


def digest(key: str, body: object) -> str:
    """The digest a stored entry carries: its key and its content (canonical JSON)."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(f"{SCHEMA}\0{key}\0{text}".encode()).hexdigest()


def inconsistency(entry: CorpusEntry) -> str | None:
    """What the numbers of an entry contradict, if anything: an access or a ledger entry below its
    ideal, a ledger total not its count per execution times its executions."""
    for b in entry.report.buffers if entry.report else ():
        if b.wavefronts != sum(a.wavefronts or 0 for a in b.accesses):
            return f"buffer {b.buffer}: its wavefronts are not the sum of its accesses'"
        for a in b.accesses:
            if a.wavefronts is not None and a.ideal is not None and a.wavefronts < a.ideal:
                return f"buffer {b.buffer} {a.op}: {a.wavefronts} wavefronts, below its ideal {a.ideal}"
    for e in entry.ledger.entries if entry.ledger else ():
        where = f"ledger {e.location} {e.instr}"
        if e.wavefronts is not None and e.ideal is not None and e.wavefronts < e.ideal:
            return f"{where}: {e.wavefronts} wavefronts, below its ideal {e.ideal}"
        runs = e.executions
        if e.total_wavefronts is not None and (e.wavefronts is None or runs is None
                                               or e.total_wavefronts != e.wavefronts * runs):  # fmt: skip
            return f"{where}: its total is not its wavefronts times its executions"
        if e.total_instructions is not None and e.total_instructions != e.instructions * (runs or 0):
            return f"{where}: its instruction total is not per execution times executions"
    return None


class ResultStore:
    """Entries by key under ``root/KEY[:2]/KEY.json``; :attr:`refused` lists the stored entries a
    load did not trust (each computed again)."""

    def __init__(self, root: str | os.PathLike):
        self.refused: list[str] = []
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
        """The stored entry, or ``None`` where there is none or it cannot be trusted (then
        :attr:`refused` says why): computed again."""
        entry, why = self.check(key)
        if why is not None:
            self.refused.append(f"{key[:12]}: {why}")
        return entry

    def check(self, key: str) -> tuple[CorpusEntry | None, str | None]:
        """``(entry, None)`` for a stored entry that passes every check; ``(None, None)`` where none
        is stored; ``(None, why)`` where the file is not a regular file, is larger than
        :data:`MAX_BYTES`, is not the store's JSON, names another key, fails its digest (a byte
        changed since it was written), is not an entry (the typed decoder), or fails a consistency
        check its numbers allow (:func:`inconsistency`)."""
        path = self._path(key)
        if not path.exists() and not path.is_symlink():
            return None, None
        try:
            data = json_value(read_text(path, MAX_BYTES, "stored entry", "file"), "stored entry", "file")
            if not isinstance(data, dict) or set(data) != {"schema", "key", "digest", "entry"}:
                return None, "not a stored entry (another shape of JSON)"
            if data["schema"] != SCHEMA or data["key"] != key:
                return None, "written for another key or schema"
            if data["digest"] != digest(key, data["entry"]):
                return None, "its digest does not match its content (changed since it was written)"
            entry = read_entry(data["entry"])
        except (ValueError, RecursionError) as e:  # InputError is a ValueError
            return None, f"not readable as an entry ({str(e)[:200]})"
        why = inconsistency(entry)
        return (None, why) if why else (entry, None)

    def save(self, key: str, entry: CorpusEntry) -> None:
        if any(t in (entry.error or "") for t in TRANSIENT):
            return
        path = self._path(key)
        path.parent.mkdir(exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        body = entry.to_dict()  # key order kept: a stored entry prints as a computed one
        with os.fdopen(fd, "w") as fh:
            json.dump({"schema": SCHEMA, "key": key, "digest": digest(key, body), "entry": body}, fh)
        os.replace(tmp, path)

    def keys(self) -> list[str]:
        return sorted(p.stem for p in self.root.glob("??/*.json"))


__all__ = ["ResultStore", "code_digest", "job_key"]
