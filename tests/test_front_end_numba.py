"""numba-cuda from the user's side (``bankproof.kernel_numba``): a ``@cuda.jit`` function and its
signature, compiled to PTX here without a GPU, answered on the function's own Python lines: the
32x32 transpose's read ``tile[tx, ty]`` is a 32-way conflict at its line, the padded tile's none."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from bankproof.models.errors import InputError

import bankproof

pytest.importorskip("numba.cuda", reason="numba-cuda is the numba extra")
from tests import kernel_cases as kc  # noqa: E402

FILE = Path(__file__).resolve().parent / "data" / "numba" / "kernels.py"
SIG = "void(float32[:, :], float32[:, :])"


@pytest.fixture(scope="module")
def kernels():
    if not kc.have_nvrtc():
        pytest.skip("numba's NVVM comes with the cuda extra")
    spec = importlib.util.spec_from_file_location("numba_test_kernels", FILE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _line(text: str) -> int:
    return next(i for i, s in enumerate(FILE.read_text().splitlines(), 1) if s.strip() == text)


def test_the_answer_is_on_the_user_s_python_lines(kernels):
    r = bankproof.kernel_numba(kernels.transpose, SIG, block=(32, 32))
    lines = {
        (ln.location.file, ln.location.line): (ln.instructions, ln.wavefronts, ln.verdict) for ln in r.lines
    }
    store, load = _line("tile[ty, tx] = a[ty, tx]"), _line("b[ty, tx] = tile[tx, ty]")
    assert lines[(str(FILE), store)] == (32, 32, "proved")
    assert lines[(str(FILE), load)] == (32, 1024, "refuted")  # first function's lines
    assert r.verdict == "refuted" and "transpose, numba" in r.source and r.kernel == "transpose"
    padded = bankproof.kernel_numba(kernels.transpose_padded.py_func, SIG, block=(32, 32))
    assert padded.verdict == "proved"
    assert {t.kind: t.wavefronts for t in padded.totals} == {"ld": 32, "st": 32}


def test_what_numba_cannot_compile_is_an_input_error(kernels):
    with pytest.raises(InputError, match="numba could not compile it"):
        bankproof.kernel_numba(kernels.transpose, "void(float32[:, :])", block=32)
    with pytest.raises(InputError, match="arch"):
        bankproof.kernel_numba(kernels.transpose, SIG, arch="gfx942")


def test_a_fix_names_the_python_variable_only_where_vouched_for(kernels):
    """numba's ``_cudapy_smem_1`` is ``tile`` (one array declared, 32x32 f32 = 4,096 bytes, as
    the PTX's symbol); a PTX symbol of another size, or another count, keeps numba's name."""
    from bankproof.verifier.api.numba_names import rename

    r = bankproof.kernel_numba(kernels.transpose, SIG, block=(32, 32))
    (fix,) = [i.fix for i in r.instructions if i.fix]
    assert fix.startswith("pad `tile`: ")
    fn = kernels.transpose.py_func
    assert rename(fn, [("_cudapy_smem_1", 4096)]) == {"_cudapy_smem_1": "tile"}
    assert rename(fn, [("_cudapy_smem_1", 4224)]) == {}
    assert rename(fn, [("_cudapy_smem_1", 4096), ("_cudapy_smem_2", 4096)]) == {}
