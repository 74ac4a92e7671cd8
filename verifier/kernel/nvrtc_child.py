"""The compile step of :mod:`bankproof.verifier.kernel.nvrtc`, run in its own process: reads
``{"source", "name", "options", "headers", "readable"}`` as JSON on stdin, confines itself
(:mod:`bankproof.verifier.kernel.sandbox`: only ``readable`` may be opened), and writes
``{"ok", "ptx", "log", "confined"}`` on stdout. The user's headers come in memory, by the names
they are included as; nothing of the user's is read from a file here.

>>> "nvrtcCompileProgram" in run.__doc__
True
"""

from __future__ import annotations

import json
import sys

from bankproof.verifier.kernel.sandbox import confine, memory_limit


def run(job: dict) -> dict:
    """nvrtcCreateProgram (the headers in memory), confine, nvrtcCompileProgram, then the PTX (or
    the log of a failed compile)."""
    from cuda.bindings import nvrtc

    memory_limit()
    names = [n.encode() for n, _ in job.get("headers", [])]
    texts = [t.encode() for _, t in job.get("headers", [])]
    err, prog = nvrtc.nvrtcCreateProgram(
        job["source"].encode(), job["name"].encode(), len(names), texts, names
    )
    opts = [o.encode() for o in job["options"]]
    confined = confine(list(job.get("readable", [])))
    (res,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    err, size = nvrtc.nvrtcGetProgramLogSize(prog)
    log = b" " * size
    nvrtc.nvrtcGetProgramLog(prog, log)
    text = log.decode(errors="replace").rstrip("\x00")
    if res != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        return {"ok": False, "ptx": "", "log": text, "confined": confined}
    err, size = nvrtc.nvrtcGetPTXSize(prog)
    ptx = b" " * size
    nvrtc.nvrtcGetPTX(prog, ptx)
    return {"ok": True, "ptx": ptx.decode(errors="replace").rstrip("\x00"), "log": "", "confined": confined}


if __name__ == "__main__":
    sys.stdout.write(json.dumps(run(json.loads(sys.stdin.read()))))
