"""The key that authenticates a results store, kept where the store is not: the environment's
``BANKPROOF_STORE_KEY`` (hex, at least 32 digits: for a store shared between machines, such as a
CI cache, set from a secret), or else the user's key file
``$XDG_CONFIG_HOME/bankproof/store.key`` (``~/.config`` by default), created with mode 0600 on first
use. A key file that others can read or write, or that lies inside the store, is refused: whoever
can change the store must not be able to change the key.

>>> store_secret(Path("/nonexistent"), {"BANKPROOF_STORE_KEY": "00" * 16}) == bytes(16)
True
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path

from bankproof.models.errors import InputError

ENV = "BANKPROOF_STORE_KEY"
WHERE = "results store"


def key_file(env: Mapping[str, str]) -> Path:
    """Where the user's key file is."""
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(base) / "bankproof" / "store.key"


def store_secret(root: Path, env: Mapping[str, str] | None = None) -> bytes:
    """The key of the store at ``root`` (see the module docstring)."""
    env = os.environ if env is None else env
    given = env.get(ENV)
    if given is not None:
        try:
            key = bytes.fromhex(given.strip())
        except ValueError:
            raise InputError(WHERE, ENV, "must be hexadecimal digits") from None
        if len(key) < 16:
            raise InputError(WHERE, ENV, "must be at least 32 hexadecimal digits (16 bytes)")
        return key
    path = key_file(env)
    if path.resolve().is_relative_to(root.resolve()):
        raise InputError(WHERE, "key file", f"lies inside the store; set {ENV} or XDG_CONFIG_HOME", str(path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return _read(path)
    except OSError as e:
        raise InputError(
            WHERE, "key file", f"cannot be created ({e.strerror}); set {ENV}", str(path)
        ) from None
    with os.fdopen(fd, "w") as fh:
        fh.write(secrets.token_hex(32) + "\n")
    return _read(path)


def _read(path: Path) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as e:
        raise InputError(WHERE, "key file", f"cannot be read ({e.strerror})", str(path)) from None
    with os.fdopen(fd) as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o077 or st.st_uid != os.getuid():
            raise InputError(WHERE, "key file", "must be a regular file of yours with mode 0600", str(path))
        text = fh.read(200).strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) < 16:
        raise InputError(WHERE, "key file", "must hold at least 32 hexadecimal digits", str(path))
    return key


__all__ = ["store_secret", "key_file", "ENV"]
