"""CUTLASS's own definitions of its auto-vectorizing copies, read at every release tag: the alias
lines of ``include/cute/arch/copy.hpp`` and the width rule of ``include/cute/algorithm/copy.hpp``
(the lines that compute ``vec_bits``/``align_bits``), written to a JSON table that
``tests/test_cutlass_releases.py`` holds :mod:`bankproof.models.notation.cutlass_releases` to.

    python -m lab.cutlass_copy_aliases /path/to/cutlass tests/data/cutlass_copy_aliases.json
"""

from __future__ import annotations

import json
import re
import subprocess
import sys


def _show(repo: str, tag: str, path: str) -> str:
    run = subprocess.run(["git", "-C", repo, "show", f"{tag}:{path}"], capture_output=True, text=True)
    return run.stdout if run.returncode == 0 else ""


def table(repo: str) -> dict[str, dict[str, list[str]]]:
    tags = subprocess.run(
        ["git", "-C", repo, "tag"], capture_output=True, text=True, check=True
    ).stdout.split()
    tags = sorted(
        (t for t in tags if re.fullmatch(r"v\d+\.\d+\.\d+", t)),
        key=lambda t: tuple(map(int, t[1:].split("."))),
    )
    out = {}
    for tag in tags:
        arch = _show(repo, tag, "include/cute/arch/copy.hpp")
        if not arch:
            continue  # before CuTe
        algo = _show(repo, tag, "include/cute/algorithm/copy.hpp")
        aliases = [
            " ".join(x.split())
            for x in re.findall(r"using\s+(?:AutoVectorizingCopy|DefaultCopy)\s*=[^;]*;", arch)
        ]
        structs = [
            n
            for n in ("DefaultCopy", "AutoVectorizingCopyWithAssumedAlignment")
            if re.search(rf"struct\s+{n}\b", arch)
        ]
        rule = [
            " ".join(x.split()) for x in re.findall(r"constexpr int (?:vec_bits|align_bits)\s*=[^;]*;", algo)
        ]
        out[tag[1:]] = {"aliases": aliases, "structs": structs, "rule": rule}
    return out


def main(argv: list[str]) -> int:
    data = table(argv[0])
    with open(argv[1], "w") as f:
        json.dump({"source": "NVIDIA/cutlass release tags", "releases": data}, f, indent=1)
        f.write("\n")
    print(f"{len(data)} releases written to {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
