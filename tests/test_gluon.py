"""Gluon layout objects wherever the API takes a layout: exact answers, the same as the attribute
text they build, and bad objects refused naming the field (tests/test_gluon_agreement.py compares
the bases with Triton on random objects)."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass, field

import pytest
from bankproof.models.errors import InputError
from bankproof.models.notation import parse_layout
from bankproof.models.notation.gluon import gluon_attribute, gluon_shape, is_gluon

import bankproof as bp
from tests.test_api import _untimed

needs_triton = pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="needs the triton extra")
ROWS = (
    "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>"
)
COLS = (
    "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 1], order = [0, 1]}>"
)
PLAIN = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"


def _gluon(cls):
    """Make a stand-in class look like Gluon's (its module), to test refusals without Triton."""
    cls.__module__ = "triton.experimental.gluon.language._layouts"
    return cls


@_gluon
@dataclass
class BlockedLayout:
    size_per_thread: object
    threads_per_warp: object = field(default_factory=lambda: [1, 32])
    warps_per_cta: object = field(default_factory=lambda: [1, 1])
    order: object = field(default_factory=lambda: [1, 0])
    cga_layout: object = field(default_factory=list)


@_gluon
@dataclass
class SliceLayout:
    dim: int
    parent: object


@_gluon
class AutoLayout:
    pass


@_gluon
class SharedLinearLayout:
    offset_bases = [[0, 1]]
    block_bases: list = []
    alignment = 16

    @property
    def shape(self):
        raise ZeroDivisionError


class constexpr:  # noqa: N801 - named as Gluon names its wrapper
    """A Gluon-like constexpr whose ``.value`` raises (an object the user built)."""

    @property
    def value(self):
        return 1 // 0


def test_a_constexpr_whose_value_raises_is_refused_naming_the_field():
    with pytest.raises(InputError, match="gluon: BlockedLayout.size_per_thread cannot be read"):
        parse_layout(BlockedLayout(constexpr()), (32, 32))
    with pytest.raises(InputError, match="gluon: BlockedLayout.size_per_thread cannot be read"):
        parse_layout(BlockedLayout([1, constexpr()]), (32, 32))


@pytest.mark.compile
@needs_triton
def test_gluon_objects_answer_like_their_attribute_text():
    from triton.experimental.gluon.language import _layouts as gl

    rows = gl.BlockedLayout([1, 1], [1, 32], [1, 1], [1, 0])
    cols = gl.BlockedLayout([1, 1], [32, 1], [1, 1], [0, 1])
    plain = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    r = bp.verify(plain, store=rows, load=cols, shape=(32, 32), dtype="f32")
    assert (r.verdict, [a.wavefronts for a in r.accesses]) == ("refuted", [32, 256])
    assert r.access("load").conflict.lanes == (0, 1)
    same = bp.verify(PLAIN, store=ROWS, load=COLS, shape=(32, 32), dtype="f32")
    assert _untimed(json.loads(r.to_json())) == _untimed(json.loads(same.to_json()))
    swizzled = bp.verify(gl.SwizzledSharedLayout(1, 1, 32, [1, 0]), store=rows, load=cols, shape=(32, 32),
                         dtype="f32")  # fmt: skip
    assert (swizzled.verdict, [a.wavefronts for a in swizzled.accesses]) == ("proved", [32, 32])
    assert bp.convert(rows, cols, shape=(32, 32), dtype="f32").verdict == "proved"
    assert bp.show(plain, load=cols, shape=(32, 32), dtype="f32").instr == "ld128"


@needs_triton
def test_every_gluon_class_reads_as_its_attribute():
    from triton.experimental.gluon.language import _layouts as gl
    from triton.experimental.gluon.language.nvidia.ampere.mbarrier import MBarrierLayout

    mma = gl.NVMMADistributedLayout([2, 0], [4, 1], [16, 8])
    texts = {
        gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0], [[1, 0]]): "#ttg.blocked<{sizePerThread = [1, 8], "
        "threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0], CGALayout = [[1, 0]]}>",
        gl.SliceLayout(1, mma): "#ttg.slice<{dim = 1, parent = #ttg.nvidia_mma<{versionMajor = 2, "
        "versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 8]}>}>",
        gl.DotOperandLayout(1, mma, 4): "#ttg.dot_op<{opIdx = 1, parent = #ttg.nvidia_mma<{versionMajor = 2, "
        "versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 8]}>, kWidth = 4}>",
        gl.DistributedLinearLayout(
            [[0, 1]], [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], [], [], [32, 2]
        ): "#ttg.linear<{register = [[0, 1]], lane = [[1, 0], [2, 0], "
        "[4, 0], [8, 0], [16, 0]], warp = [], block = []}>",  # fmt: skip
        gl.NVMMASharedLayout(64, 8, rank=3, transposed=True): "#ttg.nvmma_shared<{swizzlingByteWidth = 64, "
        "transposed = true, elementBitWidth = 8, rank = 3}>",
        gl.SharedLinearLayout(
            [[0, 1], [1, 0]], alignment=128
        ): "#ttg.shared_linear<{offset = [[0, 1], [1, 0]]}, alignment = 128>",
        gl.PaddedSharedLayout([[32, 4]], [[0, 1], [1, 0]], [], [2, 2]): "#ttg.padded_shared<[32:+4] "
        "{offset = [[0, 1], [1, 0]], block = []}>",
        MBarrierLayout(): "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>",
    }
    for obj, text in texts.items():
        assert is_gluon(obj) and gluon_attribute(obj).text() == text, obj
    # the objects that carry a shape give it; the others need one
    assert parse_layout(gl.PaddedSharedLayout([[32, 4]], [[0, 1], [1, 0]], [], [2, 2])).shape == [2, 2]
    assert gluon_shape(gl.SharedLinearLayout([[0, 1], [0, 2], [1, 0]])) == [2, 4]
    p = bp.problem(gl.SharedLinearLayout([[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]),
                   load=gl.DistributedLinearLayout([], [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]], [], [], [1, 32]),
                   dtype="f32")  # fmt: skip
    assert p.shape == [1, 32] and p.memory_text.startswith("#ttg.shared_linear<")
    with pytest.raises(InputError, match="shape is required"):
        parse_layout(mma)


@pytest.mark.parametrize(
    "obj, message",
    [
        (AutoLayout(), "gluon: layout must be one of Gluon's BlockedLayout, .*got AutoLayout"),
        (
            BlockedLayout("abc"),
            "gluon: BlockedLayout.size_per_thread must be an integer, a bool or a short list",
        ),
        (BlockedLayout([1, 1.5]), "gluon: BlockedLayout.size_per_thread must be an integer"),
        (BlockedLayout([1, 3]), "blocked: sizePerThread entries must be powers of two, got \\[1, 3\\]"),
        (BlockedLayout([1, 1], order=[0, 0]), "blocked: order must be a permutation of 0..1"),
        (SliceLayout(0, "#ttg.blocked<{}>"), "gluon: SliceLayout.parent must be a Gluon layout"),
        (SliceLayout(5, BlockedLayout([1, 1])), "slice: dim"),
        (SharedLinearLayout(), "gluon: SharedLinearLayout.shape cannot be read"),
    ],
)
def test_bad_gluon_objects_are_refused_naming_the_field(obj, message):
    memory = isinstance(obj, SharedLinearLayout)
    shape = None if memory else (32, 32)
    with pytest.raises(InputError, match=message):
        parse_layout(obj, shape)
    with pytest.raises(InputError, match=message):
        bp.verify(obj if memory else PLAIN, load=COLS if memory else obj, shape=shape, dtype="f32")


@needs_triton
def test_gluon_objects_in_a_spec_dict():
    """A spec given as a dict (API) may hold Gluon objects where a file holds attribute text."""
    from triton.experimental.gluon.language import _layouts as gl

    spec = {
        "shape": [32, 32],
        "dtype": "f32",
        "memory": {"triton": gl.SwizzledSharedLayout(1, 1, 32, [1, 0])},
        "access": [{"kind": "load", "layout": {"triton": gl.BlockedLayout([1, 1], [32, 1], [1, 1], [0, 1])}}],
    }
    r = bp.verify(spec=spec)
    assert (r.verdict, [a.wavefronts for a in r.accesses]) == ("proved", [32])
    with pytest.raises(InputError, match="spec: access\\[0\\].layout.triton must be a string"):
        bp.verify(spec={**spec, "access": [{"kind": "load", "layout": {"triton": 3}}]})
