"""The kernels the GPU records measured by source line are the files in the repository, byte for
byte: a record's source pages name lines of these files, so an edit that moves a line (a formatter
run over ``lab/``) would join every later count to the wrong line. ``ruff format`` leaves them out
(pyproject); a change to one of them means measuring again."""

from __future__ import annotations

import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AS_MEASURED = {
    "lab/public/__init__.py": "c1644e0eb262ee72a04b114b822b87e90c89b0234e13efe38b7e67b2fdfcdcba",
    "lab/public/attention.py": "43f50a605bd05ec56e465d56ed3e50fcb6717b79b9f3ebe9f1f9cbd29f9baa41",
    "lab/public/linear_attn.py": "e2a5faccbf119378c9bf55502b306469e1a105836969a1c8b1cfccc0aba766b1",
    "lab/public/matmul.py": "a6b72ded30f4aa5bad9079ad950dce43d46ae35925803488eceb2e4c07cf6570",
    "lab/public/moe_quant.py": "8d0e76e71f0f674937e4fb0dc8e690bdde42f060919cf91b4859245ed8f5234c",
    "lab/public/norms.py": "f7822b45e94b878be4092736f74c01c2e68020083023345dd4ae428d0f3e8357",
    "lab/public/strided.py": "8bbd332a455b507fb1277081e85201e694ca3c6242a3da5d47199e3bd2711d96",
    "lab/public_kernels.py": "e08910ea7780e1ac22c557da38b132062267a7023d3406b9c96bd784de79ca2c",
    "lab/control_flow.py": "635d806d5f2b29fbe78dae11941c422ad0fed8486196c3caf4c68efc4c87ce5c",
}


def test_the_measured_kernel_files_are_as_measured():
    now = {p: hashlib.sha256((ROOT / p).read_bytes()).hexdigest() for p in AS_MEASURED}
    assert now == AS_MEASURED


def test_the_formatter_leaves_them_out():
    import tomllib

    exclude = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]["format"]["exclude"]
    for path in AS_MEASURED:
        assert path in exclude or f"{path.rsplit('/', 1)[0]}/*" in exclude, path
