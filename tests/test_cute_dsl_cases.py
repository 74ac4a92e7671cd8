"""Eight CuTe DSL kernels (lab/cute_dsl_kernels.py: tiles staged through shared memory in CuTe
layouts, a tree reduction, a halo stencil), as the DSL's own compiler wrote their PTX on the CPU
(examples/cuda/cute_dsl): every line of every account is a line of the DSL source (its own
Python file), and every total is stated. What the layouts predict: the row-major tile read down
its columns 32-way (f32), 16-way (f16: rows 64 bytes apart fall on 2 banks) and, for f64, 32
wavefronts a read against its ideal of 2; padding or the CuTe swizzle ``S<5,0,5>`` make it
conflict-free; the column-major tile moves the conflict to the store. The H100 measurement of
these cases is prepared (lab/gpu/truth_cute_dsl, ``lab/gpu/device_kernel_truth.sh``) and not yet
recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import kernel_cases as kc

FOLDER = kc.EXAMPLES / "cute_dsl"
CASES = kc.cases(FOLDER)
EXPECTED = {  # (kind, instructions, wavefronts, ideal) of the shared loads and stores
    "cute_dsl_transpose_rowmajor": {("ld", 32, 1024, 32), ("st", 32, 32, 32)},
    "cute_dsl_transpose_padded": {("ld", 32, 32, 32), ("st", 32, 32, 32)},
    "cute_dsl_transpose_swizzled": {("ld", 32, 32, 32), ("st", 32, 32, 32)},
    "cute_dsl_transpose_colmajor": {("ld", 32, 32, 32), ("st", 32, 1024, 32)},
    "cute_dsl_transpose_f16": {("ld", 32, 512, 32), ("st", 32, 32, 32)},
    "cute_dsl_transpose_f64": {("ld", 32, 1024, 64), ("st", 32, 64, 64)},
    "cute_dsl_reduce_tree": {("ld", 25, 25, 25), ("st", 20, 20, 20)},
    "cute_dsl_stencil_halo": {("ld", 24, 24, 24), ("st", 10, 10, 10)},
}


@pytest.mark.parametrize("c", CASES, ids=[c["name"] for c in CASES])
def test_each_account_is_on_the_dsl_source_and_stated(c):
    if not kc.have_nvrtc():
        pytest.skip("the SASS read beside the PTX comes with the cuda extra")
    r = kc.analyse_case(c)
    assert {(t.kind, t.instructions, t.wavefronts, t.ideal) for t in r.totals} == EXPECTED[c["name"]]
    assert r.lines and all(Path(ln.location.file).name == "cute_dsl_kernels.py" for ln in r.lines)


def test_the_set_is_eight_kernels():
    assert sorted(c["name"] for c in CASES) == sorted(EXPECTED)
