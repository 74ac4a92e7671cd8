"""The launch's own data: buffer contents for a kernel's pointer arguments, so that values the
kernel loads decide its trip counts, branches and addresses exactly.

A pointer argument given a buffer lies at its own 256-byte-aligned address (as one not given
does: ``POINTER_BASE + i * 2^32`` for parameter ``i``); a global load whose every active lane's
address is known and falls in a given buffer reads its bytes (little-endian, zero- or
sign-extended as the instruction's type says). A pointer given as ``null`` is 0. What a load
reads stays unknown, and says why, where:

- the address falls in a pointer argument with no buffer given (``--buffer NAME=FILE.npy``);
- the buffer is one the kernel itself may write (a global store, atomic or reduction whose
  address comes from that argument, or from anything that is no argument's): other CTAs of the
  launch may have written it first, so its contents at launch time do not decide the value.

A load past a buffer's end, or through a null pointer, is an error naming the access.

>>> mem = GlobalMemory({"n": Buffer(np.arange(4, dtype=np.int32).tobytes())}, {"n": 1 << 40})
>>> v, k, why = mem.load(np.array([(1 << 40) + 4, (1 << 40) + 12]), np.ones(2, bool), 4, False, 1)
>>> v[0].tolist(), k.tolist(), why
([1, 3], [True, True], '')
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from bankproof.models.errors import InputError

MAX_BUFFER_BYTES = 256 << 20  # one buffer (a loop bound, a block table, expert ids: far less)
MAX_TOTAL_BYTES = 1 << 30  # every buffer of one launch
REGION_BITS = 32  # each pointer argument's address region: 4 GiB
WHERE = "kernel"
_DTYPES = frozenset(
    {"u1", "u2", "u4", "u8", "i1", "i2", "i4", "i8", "f2", "f4", "f8", "uint8", "uint16", "uint32",
     "uint64", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "bool", "bf16"}
)  # fmt: skip


@dataclass(frozen=True)
class Buffer:
    """The bytes a pointer argument points to at launch (``data``), or ``None``: a null pointer."""

    data: bytes | None

    @property
    def null(self) -> bool:
        return self.data is None

    def __repr__(self) -> str:
        return "Buffer(null)" if self.data is None else f"Buffer({len(self.data)} bytes)"


def from_value(name: str, value: object) -> Buffer:
    """A buffer from what an API caller holds: ``None`` (a null pointer), ``bytes``, a numpy array
    or a torch tensor (copied to the host).

    >>> from_value("x", np.array([1, 2], dtype=np.int16))
    Buffer(4 bytes)
    """
    if value is None:
        return Buffer(None)
    if isinstance(value, Buffer):
        return _checked(name, value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _checked(name, Buffer(bytes(value)))
    if type(value).__module__.startswith("torch") and hasattr(value, "detach"):
        value = _torch_bytes(value)
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            raise InputError(WHERE, "buffers", f"{name} holds Python objects, not numbers", str(value.dtype))
        if value.nbytes > MAX_BUFFER_BYTES:
            raise InputError(
                WHERE, "buffers", f"{name} is larger than {MAX_BUFFER_BYTES} bytes", value.nbytes
            )
        return Buffer(np.ascontiguousarray(value).tobytes())
    raise InputError(WHERE, "buffers", f"{name} must be a numpy array, a torch tensor, bytes or None",
                     type(value).__name__)  # fmt: skip


def _torch_bytes(t) -> np.ndarray:
    """A tensor's bytes on the host (any dtype: viewed as bytes first, so bf16 and fp8 pass)."""
    import torch  # the caller's own tensor: torch is there

    flat = t.detach().contiguous().reshape(-1)
    if flat.numel() * flat.element_size() > MAX_BUFFER_BYTES:
        raise InputError(WHERE, "buffers", f"a tensor is larger than {MAX_BUFFER_BYTES} bytes")
    return flat.view(torch.uint8).cpu().numpy()


def _checked(name: str, buf: Buffer) -> Buffer:
    if buf.data is not None and len(buf.data) > MAX_BUFFER_BYTES:
        raise InputError(WHERE, "buffers", f"{name} is larger than {MAX_BUFFER_BYTES} bytes", len(buf.data))
    return buf


def parse_flag(spec: str) -> tuple[str, Buffer]:
    """``NAME=FILE.npy``, ``NAME=FILE`` (raw bytes), ``NAME=FILE:DTYPE`` (raw bytes, whole elements
    of that type) or ``NAME=null``: one ``--buffer`` flag, its file read (numpy's format without
    pickles).

    >>> parse_flag("bias=null")
    ('bias', Buffer(null))
    """
    name, sep, rest = str(spec).partition("=")
    name = name.strip()
    if not sep or not re.fullmatch(r"[\w$]{1,200}", name) or not rest.strip():
        raise InputError(WHERE, "buffer", "must be NAME=FILE.npy, NAME=FILE[:DTYPE] or NAME=null", spec)
    rest = rest.strip()
    if rest == "null":
        return name, Buffer(None)
    path, dtype = rest, None
    m = re.fullmatch(r"(.+):(\w+)", rest)
    if m and not Path(rest).exists():
        path, dtype = m.group(1), m.group(2)
        if dtype not in _DTYPES:
            raise InputError(
                WHERE, "buffer", f"{name}: {dtype} is not a dtype (int32, uint8, float16...)", spec
            )
    return name, Buffer(_read_file(name, Path(path), dtype))


def _read_file(name: str, path: Path, dtype: str | None) -> bytes:
    try:
        if not path.is_file():
            raise InputError(WHERE, "buffer", f"{name}: no such file", str(path))
        size = path.stat().st_size
        if size > MAX_BUFFER_BYTES + 4096:
            raise InputError(WHERE, "buffer", f"{name}: larger than {MAX_BUFFER_BYTES} bytes", str(path))
        if path.suffix == ".npy":
            with open(path, "rb") as f:
                arr = np.load(f, allow_pickle=False)
            if not isinstance(arr, np.ndarray) or arr.dtype.hasobject:
                raise InputError(WHERE, "buffer", f"{name}: not an array of numbers", str(path))
            return np.ascontiguousarray(arr).tobytes()
        data = path.read_bytes()
    except InputError:
        raise
    except (OSError, ValueError, EOFError) as e:
        raise InputError(WHERE, "buffer", f"{name}: cannot be read ({type(e).__name__})", str(path)) from None
    item = 2 if dtype == "bf16" else np.dtype(dtype).itemsize if dtype else 1
    if len(data) % item:
        raise InputError(
            WHERE, "buffer", f"{name}: {len(data)} bytes is not whole {dtype} elements", str(path)
        )
    return data


def checked(buffers: Mapping | None) -> tuple[tuple[str, Buffer], ...]:
    """The API's ``buffers`` mapping (name or position -> value), checked: the launch's form."""
    if buffers is None:
        return ()
    if not isinstance(buffers, Mapping):
        raise InputError(WHERE, "buffers", "must be a mapping NAME -> array, tensor, bytes or None", buffers)
    out, total = [], 0
    for k, v in buffers.items():
        if not isinstance(k, (str, int)) or isinstance(k, bool) or not re.fullmatch(r"[\w$]{1,200}", str(k)):
            raise InputError(WHERE, "buffers", "names must be parameter names or positions", k)
        buf = from_value(str(k), v)
        total += len(buf.data or b"")
        if total > MAX_TOTAL_BYTES:
            raise InputError(WHERE, "buffers", f"hold more than {MAX_TOTAL_BYTES} bytes together")
        out.append((str(k), buf))
    return tuple(out)


def read_specs(specs: list[str] | tuple[str, ...]) -> dict[str, Buffer]:
    """Every ``--buffer`` flag (a name given twice is an error)."""
    out: dict[str, Buffer] = {}
    for s in specs or ():
        name, buf = parse_flag(s)
        if name in out:
            raise InputError(WHERE, "buffer", f"{name} is given twice", s)
        out[name] = buf
    checked(out)
    return out


def spec_paths(specs: list[str] | tuple[str, ...]) -> list[str]:
    """The files ``--buffer`` flags name (an output must not overwrite one)."""
    out = []
    for s in specs or ():
        rest = str(s).partition("=")[2].strip()
        if rest and rest != "null":
            out.append(rest if Path(rest).exists() else rest.rsplit(":", 1)[0])
    return out


class GlobalMemory:
    """The launch's global memory as the machine reads it: ``buffers`` by PTX parameter name,
    ``bases`` each pointer parameter's address, ``written`` the parameters the kernel may write
    (``"*"``: a write whose address is no argument's, so every buffer)."""

    def __init__(self, buffers: Mapping[str, Buffer], bases: Mapping[str, int],
                 written: frozenset[str] = frozenset(), shown: Mapping[str, str] | None = None):  # fmt: skip
        self.buffers, self.written, self.shown = dict(buffers), written, dict(shown or {})
        self.region = {base >> REGION_BITS: name for name, base in bases.items() if base}
        self.bases = dict(bases)
        self.arrays = {
            n: np.frombuffer(b.data, dtype=np.uint8) for n, b in buffers.items() if b.data is not None
        }

    def owner(self, addr: int) -> str | None:
        """The pointer parameter whose region holds ``addr``."""
        return self.region.get(addr >> REGION_BITS)

    def load(self, addr: np.ndarray, on: np.ndarray, size: int, signed: bool, count: int,
             where: str = "") -> tuple[list[np.ndarray], np.ndarray, str]:  # fmt: skip
        """``count`` elements of ``size`` bytes from ``addr`` per thread (the threads of ``on``, whose
        addresses are known): their values, where known, and why not where not."""
        n = len(addr)
        known = np.zeros(n, dtype=bool)
        vals = [np.zeros(n, dtype=np.int64) for _ in range(count)]
        idx = np.flatnonzero(on)
        if not idx.size:
            return vals, known, ""
        owners = {self.owner(int(a)) for a in addr[idx].tolist()}
        if None in owners or len(owners) != 1:
            if any(0 <= int(a) < (1 << REGION_BITS) for a in addr[idx].tolist()) and self._nulls():
                raise InputError(WHERE, "buffer", f"{where} loads through a null pointer ({self._nulls()})")
            return vals, known, ""
        (name,) = owners
        shown = self.shown.get(name, name)
        if name not in self.buffers:
            return vals, known, f"the buffer {shown} (not given: --buffer {shown}=FILE.npy)"
        if name in self.written or "*" in self.written:
            return vals, known, f"the buffer {shown}, which the kernel writes (other CTAs may write it first)"
        data = self.arrays[name]
        off = addr[idx] - self.bases[name]
        end = off + size * count
        bad = (off < 0) | (end > len(data))
        if bad.any():
            t = int(idx[np.flatnonzero(bad)[0]])
            o = int(off[np.flatnonzero(bad)[0]])
            raise InputError(WHERE, "buffer", f"{shown} holds {len(data)} bytes; {where} reads bytes "
                             f"{o}..{o + size * count - 1} of it (thread {t})")  # fmt: skip
        for j in range(count):
            raw = np.zeros(len(idx), dtype=np.uint64)
            for b in range(size):
                raw |= data[off + j * size + b].astype(np.uint64) << np.uint64(8 * b)
            v = raw.view(np.int64)
            if signed and size < 8:
                v = np.where(v >= 1 << (8 * size - 1), v - (1 << (8 * size)), v)
            vals[j][idx] = v
        known[idx] = True
        return vals, known, ""

    def _nulls(self) -> str:
        return ", ".join(n for n, b in self.buffers.items() if b.data is None)


def load_width(opcode: str) -> tuple[int, bool, int]:
    """Bytes per element, whether sign-extended, and elements (``.v2``/``.v4``) of a load.

    >>> load_width("ld.global.nc.v4.u32"), load_width("ld.global.s8")
    ((4, False, 4), (1, True, 1))
    """
    parts = opcode.split(".")
    count = next((int(p[1:]) for p in parts if re.fullmatch(r"v\d", p)), 1)
    ty = next((p for p in reversed(parts) if p[:1] in "usbf" and p[1:].isdigit()), "b32")
    return int(ty[1:]) // 8 or 1, ty[0] == "s", count


def is_global_load(opcode: str) -> bool:
    """A load that can read global memory: ``ld.global``, ``ldu.global``, or a generic ``ld``
    (the plan has already taken generic loads of shared addresses as shared ones)."""
    parts = opcode.split(".")
    if parts[0] not in ("ld", "ldu"):
        return False
    spaces = [
        p for p in parts[1:] if p in ("global", "shared", "local", "param", "const") or p.startswith("shared")
    ]
    return not spaces or spaces == ["global"]


__all__ = ["Buffer", "GlobalMemory", "checked", "from_value", "is_global_load", "load_width", "parse_flag",
           "read_specs", "spec_paths", "MAX_BUFFER_BYTES"]  # fmt: skip
