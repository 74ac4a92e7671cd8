"""The front ends' API entries (``bankproof.kernel_numba``, ``bankproof.kernel_cute``) fed
malformed, huge and hostile values in every argument: each answers or raises an ``InputError``
naming the field (:func:`tests.fuzzing.check`), never another exception or a hang."""

from __future__ import annotations

import importlib.util
import random
from collections import Counter
from pathlib import Path

import pytest

import bankproof
from tests import fuzzing
from tests import kernel_cases as kc

DATA = Path(__file__).resolve().parent / "data"
JUNK = [None, 0, -1, 1 << 70, "", "x" * 100_000, "\x00\x1b[2J", b"\xff", 1.5, [], {}, (1, 2), object(), print,
        "void(", "void(float32[:, :], float32[:, :])", "void(float32[:])", "sm90", "gfx942", "sm_90a"]  # fmt: skip


def _module(folder: str, name: str):
    spec = importlib.util.spec_from_file_location(name, DATA / folder / "kernels.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _fuzz(call, valid: dict, rng: random.Random, n: int) -> Counter:
    seen: Counter = Counter()
    for _ in range(n):
        case = dict(valid)
        for key in rng.sample(sorted(valid), rng.randint(1, len(valid))):
            case[key] = rng.choice(JUNK + [fuzzing.mutate_value(valid[key], rng)])
        seen[fuzzing.check(lambda c=case: call(**c), case)] += 1
    return seen


def test_kernel_numba_fuzzed():
    pytest.importorskip("numba.cuda", reason="numba-cuda is the numba extra")
    if not kc.have_nvrtc():
        pytest.skip("numba's NVVM comes with the cuda extra")
    mod = _module("numba", "numba_fuzz_kernels")
    valid = {"fn": mod.transpose, "signature": "void(float32[:, :], float32[:, :])", "block": (32, 32),
             "arch": "sm90", "grid": 1}  # fmt: skip
    seen = _fuzz(bankproof.kernel_numba, valid, random.Random(58), fuzzing.count(40))
    assert seen["refused"]


def test_kernel_cute_fuzzed():
    pytest.importorskip("cutlass.cute", reason="the CuTe DSL is the cute-dsl extra")
    if not kc.have_nvrtc():
        pytest.skip("the SASS read beside the PTX comes with the cuda extra")
    import cutlass
    from cutlass.cute.runtime import make_fake_tensor

    mod = _module("cute_dsl", "cute_dsl_fuzz_kernels")
    fake = make_fake_tensor(cutlass.Float32, (32, 32), stride=(32, 1))
    valid = {"fn": mod.transpose, "arguments": (fake, fake, 32), "arch": "sm90", "block": None}
    seen = _fuzz(bankproof.kernel_cute, valid, random.Random(58), fuzzing.count(30))
    assert seen["refused"]
