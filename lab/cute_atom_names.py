"""Every CuTe MMA and copy atom name any CUTLASS release defines, with the first arch it needs:
the ``struct`` (and ``using`` alias) names of ``include/cute/arch/mma*.hpp`` and ``copy*.hpp`` at
every release tag, written to the table :mod:`bankproof.models.notation.cute_names` reads (a name
in none of them is a typo: refused with the nearest real names).

    python -m lab.cute_atom_names /path/to/cutlass models/notation/cute_atoms.json
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

_DECL = re.compile(r"^\s*(?:template\s*<[^;{]*>\s*)?struct\s+([A-Za-z_]\w*)\b(?!\s*;)", re.M)
_ALIAS = re.compile(r"^\s*using\s+((?:SM\d+|MMA|UMMA)_\w+)\s*=", re.M)


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=True).stdout


def _arch(path: str) -> int:
    m = re.search(r"_sm(\d+)", path)
    return int(m.group(1)) if m else 0


def table(repo: str) -> dict:
    tags = sorted((t for t in _git(repo, "tag").split() if re.fullmatch(r"v\d+\.\d+\.\d+", t)),
                  key=lambda t: tuple(map(int, t[1:].split("."))))  # fmt: skip
    names: dict[str, dict[str, int]] = {"mma": {}, "copy": {}}
    seen = []
    for tag in tags:
        files = [f for f in _git(repo, "ls-tree", "-r", "--name-only", tag, "include/cute/arch/").split()
                 if re.search(r"/(mma|copy)[^/]*\.hpp$", f)]  # fmt: skip
        if not files:
            continue
        seen.append(tag[1:])
        for f in files:
            kind = "mma" if "/mma" in f else "copy"
            text = _git(repo, "show", f"{tag}:{f}")
            for name in set(_DECL.findall(text)) | set(_ALIAS.findall(text)):
                if name.startswith(("MMA_Traits", "Copy_Traits")) or name[0].islower():
                    continue
                arch = _arch(f) or _arch(name.lower())
                old = names[kind].get(name)
                names[kind][name] = arch if old is None else min(old, arch)
    return {"releases": seen, **{k: dict(sorted(v.items())) for k, v in names.items()}}


if __name__ == "__main__":
    repo, out = sys.argv[1], sys.argv[2]
    with open(out, "w") as fh:
        json.dump(table(repo), fh, indent=0, sort_keys=True)
        fh.write("\n")
