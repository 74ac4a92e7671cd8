"""The compile step of :mod:`bankproof.verifier.kernel.nvrtc`, run in its own process: reads
``{"source", "name", "options"}`` as JSON on stdin, writes ``{"ok", "ptx", "log"}`` on stdout.

>>> "nvrtcCompileProgram" in run.__doc__
True
"""

from __future__ import annotations

import json
import sys


def run(job: dict) -> dict:
    """nvrtcCreateProgram, nvrtcCompileProgram, then the PTX (or the log of a failed compile)."""
    from cuda.bindings import nvrtc

    err, prog = nvrtc.nvrtcCreateProgram(job["source"].encode(), job["name"].encode(), 0, [], [])
    opts = [o.encode() for o in job["options"]]
    (res,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    err, size = nvrtc.nvrtcGetProgramLogSize(prog)
    log = b" " * size
    nvrtc.nvrtcGetProgramLog(prog, log)
    if res != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        return {"ok": False, "ptx": "", "log": log.decode(errors="replace").rstrip("\x00")}
    err, size = nvrtc.nvrtcGetPTXSize(prog)
    ptx = b" " * size
    nvrtc.nvrtcGetPTX(prog, ptx)
    return {"ok": True, "ptx": ptx.decode(errors="replace").rstrip("\x00"), "log": ""}


if __name__ == "__main__":
    sys.stdout.write(json.dumps(run(json.loads(sys.stdin.read()))))
