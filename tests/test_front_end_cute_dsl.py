"""The CuTe DSL from the user's side (``bankproof.kernel_cute``): a ``@cute.jit`` function and
fake tensors, compiled to PTX here without a GPU, answered on the function's own Python lines;
the block is the kernel's own launch (its ``.reqntid``); nothing is written outside a temporary
folder. The 32x32 f32 transpose through a row-major tile: the read ``tile[tx, ty]`` 32-way at its
line; with rows padded to 33 words, none."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from bankproof.models.errors import InputError

import bankproof

pytest.importorskip("cutlass.cute", reason="the CuTe DSL is the cute-dsl extra")
from tests import kernel_cases as kc  # noqa: E402

FILE = Path(__file__).resolve().parent / "data" / "cute_dsl" / "kernels.py"


@pytest.fixture(scope="module")
def dsl():
    if not kc.have_nvrtc():
        pytest.skip("the SASS read beside the PTX comes with the cuda extra")
    from cutlass.cute.runtime import make_fake_tensor

    spec = importlib.util.spec_from_file_location("cute_dsl_test_kernels", FILE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    import cutlass

    fake = lambda: make_fake_tensor(cutlass.Float32, (32, 32), stride=(32, 1))  # noqa: E731
    return mod, fake


def _line(text: str) -> int:
    return next(i for i, s in enumerate(FILE.read_text().splitlines(), 1) if s.strip() == text)


def test_the_answer_is_on_the_user_s_python_lines(dsl, tmp_path, monkeypatch):
    mod, fake = dsl
    monkeypatch.chdir(tmp_path)
    r = bankproof.kernel_cute(mod.transpose, (fake(), fake(), 32))
    assert list(tmp_path.iterdir()) == []  # the DSL's kept PTX went to a temporary folder
    lines = {
        (ln.location.file, ln.location.line): (ln.instructions, ln.wavefronts, ln.verdict) for ln in r.lines
    }
    assert lines[(str(FILE), _line("tile[ty, tx] = g_a[ty, tx]"))] == (32, 32, "proved")
    assert lines[(str(FILE), _line("g_b[ty, tx] = tile[tx, ty]"))] == (32, 1024, "refuted")
    assert r.launch["block"] == [32, 32, 1] and "CuTe DSL" in r.source
    padded = bankproof.kernel_cute(mod.transpose, (fake(), fake(), 33))
    assert padded.verdict == "proved"
    assert {t.kind: t.wavefronts for t in padded.totals} == {"ld": 32, "st": 32}


def test_what_the_dsl_cannot_compile_is_an_input_error(dsl):
    mod, fake = dsl
    with pytest.raises(InputError, match="could not compile it"):
        bankproof.kernel_cute(mod.transpose, (fake(), 32))  # an argument missing
    with pytest.raises(InputError, match="arch"):
        bankproof.kernel_cute(mod.transpose, (fake(), fake(), 32), arch="gfx942")
