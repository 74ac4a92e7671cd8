"""``bankproof triton replay DIR``: a captured program (:mod:`.capture`) answered without a GPU.
Each captured launch is one scan of its compile with the launch's integer arguments, its grid
(CTA 0 analysed: ``program_id_*`` 0, ``num_programs_*`` the grid) and the buffers captured; a
compile loaded but never captured launching (an Inductor kernel) is scanned with no arguments,
its totals formulas where they need values. Reports come worst first: the most wavefronts above
the ideal per CTA.

The directory is read as user input: ``capture.json`` within 16 MiB, every name it holds a
relative path inside the directory to a regular file, every number checked.

>>> import tempfile, json, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "capture.json").write_text(json.dumps({"schema": 1, "compiles": {}, "launches": []}))
>>> read_capture(d)
([], [])
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from bankproof.models.errors import InputError
from bankproof.models.files import TEXT_BYTES, json_value, read_text
from bankproof.verifier.kernel.buffers import Buffer, read_specs
from bankproof.verifier.results import FrozenMap

WHERE = "triton replay"
RECORD_BYTES = 16 << 20
MAX_LAUNCHES = 4096
_KEY = re.compile(r"[\w.-]{1,160}")


@dataclass(frozen=True)
class Launch:
    """One captured launch (or a compile with none: ``launch`` None), as replay reads it."""

    compile: str
    name: str
    ttgir: Path
    ptx: Path | None
    grid: tuple[int, int, int]
    args: tuple[tuple[str, int], ...]
    buffers: tuple[tuple[str, Buffer], ...]
    skipped: tuple[tuple[str, str], ...]
    launch: int | None

    @property
    def label(self) -> str:
        where = "no launch captured" if self.launch is None else f"launch {self.launch}, grid {self.grid}"
        return f"{self.name} ({where})"


def _inside(root: Path, rel: object, field: str) -> Path:
    if not isinstance(rel, str) or not rel or rel.startswith(("/", "\\")) or ".." in Path(rel).parts:
        raise InputError(WHERE, field, "must be a relative path inside the capture directory", rel)
    path = root / rel
    try:
        if not path.resolve().is_relative_to(root.resolve()):
            raise InputError(WHERE, field, "leaves the capture directory", rel)
    except OSError:
        raise InputError(WHERE, field, "cannot be resolved", rel) from None
    return path


def _int(v: object, field: str, lo: int = -(1 << 63), hi: int = (1 << 64) - 1) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise InputError(WHERE, field, f"must be an integer from {lo} to {hi}", v)
    return v


def read_capture(folder: str | Path) -> tuple[list[Launch], list[str]]:
    """The launches of a capture directory, checked, and the compiles without one."""
    root = Path(folder)
    if not root.is_dir():
        raise InputError(WHERE, "DIR", "is not a directory", str(folder))
    record = json_value(
        read_text(root / "capture.json", RECORD_BYTES, WHERE, "capture.json"), WHERE, "capture.json"
    )
    if not isinstance(record, dict) or record.get("schema") != 1:
        raise InputError(WHERE, "capture.json", "is not a bankproof capture (schema 1)")
    compiles, launches = record.get("compiles", {}), record.get("launches", [])
    if not isinstance(compiles, dict) or not isinstance(launches, list) or len(launches) > MAX_LAUNCHES:
        raise InputError(
            WHERE, "capture.json", f"needs compiles (a map) and launches (a list of at most {MAX_LAUNCHES})"
        )
    texts = {}
    for key, c in compiles.items():
        if not _KEY.fullmatch(str(key)) or not isinstance(c, dict) or not isinstance(c.get("name"), str):
            raise InputError(WHERE, "compiles", "each needs a key of letters and digits and a name", key)
        ptx = _inside(root, c["ptx"], "compiles.ptx") if "ptx" in c else None
        texts[key] = (c["name"][:200], _inside(root, c.get("ttgir"), "compiles.ttgir"), ptx)
    out, used = [], set()
    for n, la in enumerate(launches):
        if not isinstance(la, dict) or la.get("compile") not in texts:
            raise InputError(WHERE, "launches", f"entry {n} names no captured compile")
        grid = la.get("grid")
        if not isinstance(grid, list) or len(grid) != 3:
            raise InputError(WHERE, "launches.grid", f"entry {n}: must be three integers", grid)
        g = tuple(_int(x, "launches.grid", 1, (1 << 31) - 1) for x in grid)
        args = la.get("args", {})
        bufs = la.get("buffers", {})
        skipped = la.get("skipped", {})
        if not all(isinstance(x, dict) for x in (args, bufs, skipped)):
            raise InputError(WHERE, "launches", f"entry {n}: args, buffers and skipped must be maps")
        ints = tuple((str(k)[:200], _int(v, "launches.args")) for k, v in args.items())
        specs = [
            f"{k}=null" if v is None else f"{k}={_inside(root, v, 'launches.buffers')}"
            for k, v in bufs.items()
        ]
        given = tuple(read_specs([s for s in specs if _KEY.fullmatch(s.split("=", 1)[0])]).items())
        why = tuple((str(k)[:200], str(v)[:200]) for k, v in skipped.items())
        name, ttgir, ptx = texts[la["compile"]]
        out.append(Launch(la["compile"], name, ttgir, ptx, g, ints, given, why, n))  # type: ignore[arg-type]
        used.add(la["compile"])
    alone = [k for k in texts if k not in used]
    for k in alone:
        name, ttgir, ptx = texts[k]
        out.append(Launch(k, name, ttgir, ptx, (1, 1, 1), (), (), (), None))
    return out, alone


def launch_args(la: Launch) -> FrozenMap | None:
    """The scan's arguments of one launch: its integers, CTA 0, the grid."""
    if la.launch is None:
        return None
    out = dict(la.args)
    for axis, n in zip("xyz", la.grid, strict=True):
        out[f"program_id_{axis}"] = 0
        out[f"num_programs_{axis}"] = n
    return FrozenMap(out)


def texts(la: Launch) -> tuple[str, str | None]:
    """The compile's TTGIR and PTX text."""
    ttgir = read_text(la.ttgir, TEXT_BYTES, WHERE, "compiles.ttgir")
    ptx = read_text(la.ptx, TEXT_BYTES, WHERE, "compiles.ptx") if la.ptx is not None else None
    return ttgir, ptx


__all__ = ["Launch", "launch_args", "read_capture", "texts"]
