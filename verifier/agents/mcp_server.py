"""``bankproof mcp``: the commands as Model Context Protocol tools over stdio, for agents (kernel
generators, agentic compilers) that want layout facts from a tool call. Each tool takes content,
never a path (the server reads no file and writes none), answers the JSON its command prints with
``--json`` (counterexamples included), and answers bad arguments as a tool error naming the field.

Tools: ``verify``, ``synth``, ``convert`` and ``agree`` take a spec (the TOML table as a JSON object,
or TOML text); ``wavefronts`` takes cases (``{"instr", "byte_offsets", "active"}``); ``kernel``
takes PTX or CUDA C++ text; ``triton_scan`` takes TTGIR text (and optionally the compile's PTX).
Needs the ``mcp`` extra (the official Python SDK).

>>> sorted(TOOLS)
['agree', 'convert', 'kernel', 'synth', 'triton_scan', 'verify', 'wavefronts']
"""

from __future__ import annotations

import functools
import json
from typing import Any

import numpy as np
from bankproof.models.archs import DEFAULT_ARCH
from bankproof.models.errors import InputError
from bankproof.verifier import api
from bankproof.verifier.api.agree import agree_spec
from bankproof.verifier.api.kernel import kernel as kernel_api
from bankproof.verifier.api.problem import spec_table
from bankproof.verifier.api.wavefronts import run_lines_each

try:  # the SDK checks arguments with pydantic: strict types, so `true` is never taken as 1
    from pydantic import StrictBool, StrictFloat, StrictInt, StrictStr
except ImportError:  # without the mcp extra (the tools still run in process)
    StrictBool, StrictFloat, StrictInt, StrictStr = bool, float, int, str  # type: ignore[misc]

Seconds = StrictInt | StrictFloat

MAX_TEXT = 1 << 20  # characters of one text argument (a spec, a kernel, a TTGIR module)
INSTRUCTIONS = (
    "bankproof proves facts about GPU shared-memory layouts: how many wavefronts each access costs, "
    "the two lanes that conflict, the best layout with a proof, whether two engines agree on bytes. "
    "Every answer is the JSON the bankproof command prints with --json."
)


def _spec(spec: dict | str) -> dict:
    """A spec given as a JSON object, or as TOML text."""
    if isinstance(spec, str):
        if len(spec) > MAX_TEXT:
            raise InputError("spec", "spec", f"is longer than {MAX_TEXT} characters", len(spec))
        return spec_table(spec)
    if not isinstance(spec, dict):
        raise InputError("spec", "spec", "must be a table (a JSON object) or TOML text", type(spec).__name__)
    return spec


def _text(value: str, where: str, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(where, field, "must be non-empty text", type(value).__name__)
    if len(value) > MAX_TEXT:
        raise InputError(where, field, f"is longer than {MAX_TEXT} characters", len(value))
    return value if value.endswith("\n") else value + "\n"  # text, never read as a path


def verify(
    spec: dict[str, Any] | StrictStr, engines: StrictStr = "all", timeout: Seconds = 10.0
) -> dict[str, Any]:
    """Wavefronts of every access of a spec, each engine's verdict, a counterexample on conflict."""
    return api.verify(spec=_spec(spec), engines=engines, timeout=timeout).to_dict()


def synth(
    spec: dict[str, Any] | StrictStr,
    engines: StrictStr = "all",
    timeout: Seconds = 10.0,
    padded: StrictBool = False,
    weights: dict[StrictStr, Seconds] | None = None,
) -> dict[str, Any]:
    """The layout with the fewest wavefronts for a spec's writer and reader, with its proof; with
    the spec's [[engine]] tables (TMA boxes, descriptor reads), or ``padded``, also the cheapest
    layout they allow, its Pareto front over the other costs and the ``weights``' pick."""
    return api.synth(
        spec=_spec(spec), engines=engines, timeout=timeout, padded=padded, weights=weights
    ).to_dict()


def convert(spec: dict[str, Any] | StrictStr, timeout: Seconds = 10.0) -> dict[str, Any]:
    """A layout conversion's shuffle plan and shared-memory round trip, checked element by element."""
    return api.convert(spec=_spec(spec), timeout=timeout).to_dict()


def agree(
    spec: dict[str, Any] | StrictStr, base: StrictInt | None = None, timeout: Seconds = 10.0
) -> dict[str, Any]:
    """Whether a writer (TMA box, st/stmatrix/cp.async) and a reader (wgmma/tcgen05 descriptor,
    ld/ldmatrix) agree on every byte of a tile; the first mismatch otherwise."""
    return agree_spec(_spec(spec), base=base, timeout=timeout, name="<mcp>").to_dict()


def wavefronts(cases: list[dict[str, Any]], arch: StrictStr = DEFAULT_ARCH) -> dict[str, Any]:
    """Wavefronts of warp instructions from per-lane byte offsets: one result per case, in order
    (a bad case answers ``{"line", "error"}`` in its place)."""
    if not isinstance(cases, list) or not cases:
        raise InputError("wavefronts", "cases", "must be a non-empty list of cases", type(cases).__name__)
    lines = [json.dumps(c) for c in cases]
    out = []
    for n, r in run_lines_each(lines, arch):
        out.append({"line": n, "error": str(r)} if isinstance(r, InputError) else r.to_dict())
    return {"results": out}


def kernel(
    source: StrictStr,
    language: StrictStr,
    kernel: StrictStr | None = None,
    block: StrictInt | StrictStr = 128,
    grid: StrictInt | StrictStr = 1,
    args: dict[StrictStr, StrictInt] | None = None,
    arch: StrictStr = DEFAULT_ARCH,
    headers: dict[StrictStr, StrictStr] | None = None,
    buffers: dict[StrictStr, dict[StrictStr, Any] | None] | None = None,
) -> dict[str, Any]:
    """The shared-memory account of one CTA of a kernel given as PTX or CUDA C++ text
    (``language`` ``ptx`` or ``cuda``): every instruction's wavefronts per execution. A CUDA
    source's own headers come as ``headers`` (text by include name); the compile reads no file
    but the toolkit's headers. ``buffers``: what pointer arguments point to, each
    ``{"dtype": "int32", "values": [...]}`` (or null: a null pointer), read where loads decide
    loops, branches and addresses."""
    if language not in ("ptx", "cuda"):
        raise InputError("kernel", "language", "must be ptx or cuda", language)
    return kernel_api(_text(source, "kernel", "source"), block=block, kernel=kernel, grid=grid, args=args,
                      language=language, arch=arch, headers=headers,
                      buffers=_buffers(buffers, "kernel")).to_dict()  # fmt: skip


def triton_scan(
    ttgir: StrictStr,
    ptx: StrictStr | None = None,
    args: dict[StrictStr, StrictInt] | None = None,
    buffers: dict[StrictStr, dict[StrictStr, Any] | None] | None = None,
) -> dict[str, Any]:
    """Every shared buffer of a Triton TTGIR module: each access's exact wavefronts, the optimum,
    a better layout where there is one; with the compile's PTX, the whole-kernel ledger
    (``buffers`` as the kernel tool takes them, with every integer argument)."""
    text = _text(ttgir, "triton_scan", "ttgir")
    code = None if ptx is None else _text(ptx, "triton_scan", "ptx")
    bufs = _buffers(buffers, "scan_ttgir")
    return api.scan_ttgir(text, path="<mcp>", ptx=code, args=args, buffers=bufs).to_dict()


MAX_VALUES = 1 << 20  # values of one buffer an agent passes inline


def _buffers(given: dict | None, where: str) -> dict | None:
    """``{"dtype", "values"}`` per buffer as numpy arrays (null: a null pointer)."""
    if given is None:
        return None
    if not isinstance(given, dict):
        raise InputError(where, "buffers", "must map argument names to {dtype, values} or null")
    out: dict = {}
    for name, spec in given.items():
        if spec is None:
            out[name] = None
            continue
        if not isinstance(spec, dict):
            raise InputError(where, "buffers", f"{name} must be {{dtype, values}} or null")
        values, dtype = spec.get("values"), spec.get("dtype", "int32")
        if not isinstance(values, list) or len(values) > MAX_VALUES or not isinstance(dtype, str):
            raise InputError(
                where, "buffers", f"{name} needs values (a list of at most {MAX_VALUES}) and a dtype"
            )
        try:
            out[name] = np.array(values, dtype=np.dtype(dtype))
        except (TypeError, ValueError, OverflowError):
            raise InputError(where, "buffers", f"{name}: values that are not {dtype}", dtype[:40]) from None
        if out[name].dtype.hasobject or out[name].ndim != 1:
            raise InputError(where, "buffers", f"{name}: values must be a flat list of numbers")
    return out


TOOLS = {f.__name__: f for f in (verify, synth, convert, agree, wavefronts, kernel, triton_scan)}


def server():
    """The MCP server with every tool (the SDK's ``MCPServer``)."""
    from bankproof.models.version import VERSION
    from mcp.server.mcpserver import MCPServer

    app = MCPServer("bankproof", instructions=INSTRUCTIONS, version=VERSION)
    for name, fn in TOOLS.items():
        app.tool(name=name, description=fn.__doc__)(_answered(fn))
    return app


def _answered(fn):
    """``fn`` with its refusals as tool errors the client reads (``verify: spec: dtype is missing
    ...``: the field named), and anything else as one line, never a traceback."""
    from mcp.server.mcpserver.exceptions import ToolError

    @functools.wraps(fn)
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except InputError as e:  # named once: "verify: spec: dtype is missing ..."
            text = str(e)
            raise ToolError(
                text if text.startswith(f"{fn.__name__}:") else f"{fn.__name__}: {text}"
            ) from None
        except Exception as e:  # noqa: BLE001 - never a traceback to an agent
            why = f"internal error: {type(e).__name__}: {e} (please report this input)"
            raise ToolError(f"{fn.__name__}: {why}") from None

    return run


def serve() -> None:
    """Serve the tools over stdio until the client closes the stream (behind
    :mod:`~bankproof.verifier.agents.stdio_guard`: every line answered, EOF ends every call)."""
    from bankproof.verifier.agents.stdio_guard import guarded

    app = server()
    guarded(lambda: app.run("stdio"))
