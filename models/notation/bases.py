"""Explicit bases: ``{"offset": [[0, 1], ...]}`` or ``{"register": ..., "lane": ..., ...}``,
as JSON text or an already-parsed mapping (e.g. a TOML table).

>>> L = parse_bases('{"offset": [[0, 1], [1, 0]]}', [2, 2])
>>> L.as_dict()
{'offset': [[0, 1], [1, 0]]}
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from bankproof.models.errors import InputError
from bankproof.models.files import json_value
from bankproof.models.layout import DISTRIBUTED_DIMS, MEMORY_DIMS, LinearLayout


def parse_bases(spec: str | Mapping[str, object], shape: Sequence[int]) -> LinearLayout:
    """Bases per input dim -> a layout onto ``dim0, dim1, ...`` of ``shape``."""
    if isinstance(spec, str):
        spec = json_value(spec, "bases", "text")
    if not isinstance(spec, Mapping) or not spec:
        raise InputError("bases", "value", "must be a non-empty table of input dims", spec)
    keys = list(spec)
    allowed = MEMORY_DIMS if "offset" in keys else DISTRIBUTED_DIMS
    for k in keys:
        if k not in allowed:
            raise InputError("bases", k, f"is not an input dim (use {', '.join(allowed)})")
    rank = len(shape)
    bases = {}
    for k in allowed:
        if k not in spec and allowed is MEMORY_DIMS:
            continue  # a memory layout has "block" only when it spans several CTAs
        v = spec.get(k, [])
        if not isinstance(v, list) or not all(
            isinstance(b, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in b) for b in v
        ):
            raise InputError("bases", k, "must be a list of [c0, c1, ...] integer lists", v)
        for b in v:
            if len(b) != rank:
                raise InputError("bases", k, f"bases must have {rank} coordinates (one per shape dim)", b)
        bases[k] = v
    return LinearLayout.from_bases(bases, {f"dim{i}": s for i, s in enumerate(shape)})


def bases_text(layout: LinearLayout) -> str:
    """A layout's bases as compact JSON."""
    return json.dumps(layout.as_dict(), separators=(", ", ": "))
