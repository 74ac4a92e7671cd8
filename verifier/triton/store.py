"""The corpus's results directory: one file per compile, keyed by what decides the compile, so a
rerun compiles only what changed and an interrupted run resumes where it stopped.

What is stored is the compile's output (:class:`Artifact`: TTGIR and PTX, or Triton's error),
never a conclusion: every result is derived again from the artifacts when read (the analysis
takes milliseconds; the compile is what the store saves), so an edited count cannot reach a
report. The artifacts are authenticated with an HMAC whose key is kept outside the store
(:mod:`~bankproof.verifier.triton.store_key`), so someone who can write the folder but not the key
cannot forge an entry; one that fails is compiled again and named in :attr:`ResultStore.refused`.

The key hashes the kernel's source as Triton sees it (``JITFunction.cache_key``: the function and
every ``@triton.jit`` function it calls), the configuration, the arch, Triton's version, and the
code of bankproof's compile step. Each file is written whole to a new file in its shard folder and
renamed into place; a shard folder that is a link (or anything but a folder) is not written through.
Timeouts and crashed workers are not stored: the next run tries them again.

>>> import tempfile
>>> s = ResultStore(tempfile.mkdtemp(), secret=b"k" * 32)
>>> s.save("ab" * 32, Artifact(config="k", arch="sm90", error="no compiler")); s.load("ab" * 32).error
'no compiler'
>>> s.load("cd" * 32) is None
True
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import json
import os
import secrets
import stat
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from bankproof.models.errors import InputError
from bankproof.models.files import json_value, read_text
from bankproof.models.version import VERSION
from bankproof.verifier.triton.store_key import store_secret

TRANSIENT = ("did not finish within", "crashed the worker", "worker crashed")  # not stored: retried
SCHEMA = 3  # a stored file: {"schema", "key", "mac", "artifact"}
MAX_BYTES = 64 << 20  # one stored entry (the largest corpus compiles are a few MB of PTX)
FIELDS = ("config", "arch", "ttgir", "ptx", "error")


@dataclass(frozen=True)
class Artifact:
    """What one (configuration, arch) compile gave: its TTGIR and PTX, or Triton's ``error``."""

    config: str
    arch: str
    ttgir: str | None = None
    ptx: str | None = None
    error: str | None = None

    @property
    def job(self) -> tuple[str, str, tuple[str, str] | None, str | None]:
        """As a compile worker returns it (:func:`~bankproof.verifier.triton.jobs.make_entry`'s arguments)."""
        compiled = (self.ttgir, self.ptx or "") if self.ttgir is not None and self.error is None else None
        return self.config, self.arch, compiled, self.error

    @classmethod
    def of_job(cls, job: tuple) -> Artifact:
        name, arch, compiled, error = job
        ttgir, ptx = compiled if compiled is not None else (None, None)
        return cls(name, arch, ttgir, ptx, error)

    @classmethod
    def read(cls, value: object) -> Artifact:
        """An artifact read back (``InputError`` naming the field where it is not one)."""
        if not isinstance(value, dict) or set(value) != set(FIELDS):
            raise InputError("stored entry", "artifact", f"must have exactly the fields {', '.join(FIELDS)}")
        for k in FIELDS:
            v = value[k]
            if not (isinstance(v, str) or (v is None and k not in ("config", "arch"))):
                raise InputError("stored entry", k, "must be text", type(v).__name__)
        return cls(**value)


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """A digest of bankproof's compile step (how a configuration becomes a Triton compile)."""
    h = hashlib.sha256(VERSION.encode())
    h.update((Path(__file__).parent / "jobs.py").read_bytes())
    return h.hexdigest()


def job_key(config: dict, arch: str, kernel_key: str, triton_version: str) -> str:
    """The store key of one (configuration, arch) compile."""
    what = {"kernel": kernel_key, "config": config, "arch": arch, "triton": triton_version,
            "code": code_digest()}  # fmt: skip
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()


def mac(secret: bytes, key: str, body: dict) -> str:
    """The authentication a stored file carries: HMAC-SHA256 of its key and artifact."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hmac.new(secret, f"{SCHEMA}\0{key}\0{text}".encode(), hashlib.sha256).hexdigest()


class ResultStore:
    """Artifacts by key under ``root/KEY[:2]/KEY.json``; :attr:`refused` names the stored files a
    load did not trust (each compiled again) and the writes that were not made."""

    def __init__(self, root: str | os.PathLike, secret: bytes | None = None):
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
        self.secret = secret if secret is not None else store_secret(self.root)

    def _path(self, key: str) -> Path:
        if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
            raise ValueError(f"not a store key: {key!r}")
        return self.root / key[:2] / f"{key}.json"

    def load(self, key: str) -> Artifact | None:
        """The stored artifact, or ``None`` where there is none or it cannot be trusted (then
        :attr:`refused` says why): compiled again."""
        art, why = self.check(key)
        if why is not None:
            self.refused.append(f"{key[:12]}: {why}")
        return art

    def check(self, key: str) -> tuple[Artifact | None, str | None]:
        """``(artifact, None)`` for a stored file that passes every check; ``(None, None)`` where
        none is stored; ``(None, why)`` where the file is not a regular file, is larger than
        :data:`MAX_BYTES`, is not the store's JSON, names another key, fails its authentication
        (written or changed without the key), or is not an artifact."""
        path = self._path(key)
        if not path.exists() and not path.is_symlink():
            return None, None
        if path.parent.is_symlink():
            return None, "its shard folder is a link: not read"
        try:
            data = json_value(read_text(path, MAX_BYTES, "stored entry", "file"), "stored entry", "file")
            if not isinstance(data, dict) or set(data) != {"schema", "key", "mac", "artifact"}:
                return None, "not a stored entry (another shape of JSON)"
            if data["schema"] != SCHEMA or data["key"] != key:
                return None, "written for another key or schema"
            body = data["artifact"]
            good = mac(self.secret, key, body) if isinstance(body, dict) else ""
            given = data["mac"].encode("utf-8", "replace") if isinstance(data["mac"], str) else b""
            if not hmac.compare_digest(given, good.encode()):
                return None, "fails its authentication (changed, or written without this store's key)"
            return Artifact.read(body), None
        except (ValueError, RecursionError) as e:  # InputError is a ValueError
            return None, f"not readable as an entry ({str(e)[:200]})"

    def save(self, key: str, art: Artifact) -> None:
        """Store ``art`` (not a transient failure); a write that cannot be made is named in
        :attr:`refused`, never raised, and never follows a link out of the store."""
        if any(t in (art.error or "") for t in TRANSIENT):
            return
        path = self._path(key)
        body = asdict(art)
        text = json.dumps(
            {"schema": SCHEMA, "key": key, "mac": mac(self.secret, key, body), "artifact": body}
        )
        try:
            _write_in(path.parent, path.name, text.encode())
        except OSError as e:
            self.refused.append(f"{key[:12]}: not stored ({e.strerror or type(e).__name__})")

    def keys(self) -> list[str]:
        return sorted(p.stem for p in self.root.glob("??/*.json"))


def _write_in(folder: Path, name: str, data: bytes) -> None:
    """``data`` as ``folder/name``, written whole then renamed; ``folder`` opened without
    following a link (one that is a link, or not a folder, is an ``OSError``)."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder)
    if not stat.S_ISDIR(os.lstat(folder).st_mode):
        raise NotADirectoryError(20, "the shard folder is a link or not a folder")
    dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        tmp = f".tmp-{secrets.token_hex(8)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=dfd)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
    finally:
        os.close(dfd)


__all__ = ["ResultStore", "Artifact", "code_digest", "job_key", "mac"]
