"""The GPU records (``gpu_checks/results/``) as the tests walk them: each file's text, and the
strings a JSON record holds under the keys a test asks for, however deep."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from pathlib import Path

RESULTS = Path(__file__).resolve().parent.parent / "gpu_checks" / "results"


def record_texts() -> Iterator[tuple[Path, str]]:
    """Every record file and its text (gzip undone)."""
    for f in sorted(RESULTS.iterdir()):
        raw = f.read_bytes()
        yield f, gzip.decompress(raw).decode() if f.suffix == ".gz" else raw.decode(errors="ignore")


def record_strings(wanted: Callable[[str, str], bool]) -> list[str]:
    """The strings of every JSON record held under a key with ``wanted(key, string)``."""
    out = []
    for _, text in record_texts():
        try:
            todo = [json.loads(text)]
        except ValueError:
            continue
        while todo:
            x = todo.pop()
            if isinstance(x, dict):
                for k, v in x.items():
                    if isinstance(v, str) and wanted(k, v):
                        out.append(v)
                    elif isinstance(v, (dict, list)):
                        todo.append(v)
            elif isinstance(x, list):
                todo.extend(x)
    return out
