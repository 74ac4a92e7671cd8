"""Addresses no GPU executes as counted are never proved (issue 54): below the shared window (a
negative offset at its start, as an immediate or computed) or past its end (out of bounds), or
misaligned (the hardware faults): refuted, exit 1, with the lane and address, never counted and
never the engines' disagreement; and a padded synthesis of a tile past the enumeration limit is
refused before anything is built."""

from __future__ import annotations

import pytest
from bankproof.models.errors import InputError
from bankproof.verifier.cli.main import main

import bankproof


def _ptx(address: str, size: int = 128, extra: str = "") -> str:
    return (f".visible .entry k()\n{{\n .shared .align 4 .b8 buf[{size}];\n{extra} mov.u32 %r2, buf;\n"
            f" add.s32 %r3, %r2, {address};\n ld.shared.u32 %r1, [%r3];\n st.shared.u32 [buf], %r1;\n}}\n")  # fmt: skip


@pytest.mark.parametrize(
    "ptx, why",
    [
        (
            ".visible .entry k()\n{\n .shared .align 4 .b8 buf[128];\n ld.shared.u32 %r1, [buf+-4];\n st.shared.u32 [buf], %r1;\n}\n",
            "byte address -4",
        ),
        (_ptx("-4"), "byte address 4294967292"),
        (_ptx("128"), "byte address 128 lies outside the CTA's 128 bytes"),
        (_ptx("128", 130), "byte address 128 lies outside the CTA's 130 bytes"),  # bytes past the end
    ],
)
def test_outside_the_window_is_refuted_never_counted(ptx, why):
    r = bankproof.kernel(ptx, block=32, language="ptx")
    (ld,) = [i for i in r.instructions if i.instr.startswith("ld")]
    assert r.verdict == "refuted" and r.exit_code == 1
    assert ld.verdict == "refuted" and ld.wavefronts is None and why in ld.reason


def test_the_dynamic_array_bounds_the_window():
    ptx = (".extern .shared .align 16 .b8 dyn[];\n.visible .entry k()\n{\n mov.u32 %r2, dyn;\n"
           " mov.u32 %r4, %tid.x;\n shl.b32 %r5, %r4, 2;\n add.s32 %r3, %r2, %r5;\n"
           " ld.shared.u32 %r1, [%r3+4096];\n st.shared.u32 [dyn], %r1;\n}\n")  # fmt: skip
    assert bankproof.kernel(ptx, block=32, language="ptx", dynamic_smem=8192).verdict == "proved"
    r = bankproof.kernel(ptx, block=32, language="ptx", dynamic_smem=4096)
    assert r.verdict == "refuted" and "outside the CTA's 4096 bytes" in r.instructions[0].reason
    assert bankproof.kernel(ptx, block=32, language="ptx").verdict == "proved"  # not given: 227 KB


def test_a_misaligned_address_is_refuted_exit_1(tmp_path, capsys):
    f = tmp_path / "k.ptx"
    f.write_text(_ptx("2"))
    assert main(["kernel", str(f), "--block", "32"]) == 1
    out = capsys.readouterr().out
    assert "is not aligned for ld.shared.b32 (the hardware faults)" in out and "None" not in out


def test_padded_synthesis_past_the_limit_is_refused_at_once(tmp_path):
    import time

    spec = {"shape": [4096, 8192], "dtype": "f32", "arch": "sm90", "dims": ["m", "n"],
            "memory": {"triton": "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"},
            "access": [{"name": "s", "kind": "store", "instr": "auto", "layout": {"triton":
                "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>"}}]}  # fmt: skip
    start = time.monotonic()
    with pytest.raises(InputError, match="padded weighs layouts element by element: the tile has 33554432"):
        bankproof.synth(spec=spec, padded=True)
    assert time.monotonic() - start < 5


@pytest.mark.fuzz
def test_addresses_fuzzed():
    """Random shared addresses (immediates of every sign and size, symbol offsets, computed ones):
    each kernel answers or is refused, never crashes, and no access outside the window is proved."""
    import random

    rng = random.Random(7)
    forms = ["[buf+{i}]", "[buf+-{i}]", "[buf-{i}]", "[%r3+{i}]", "[%r3+-{i}]", "[{i}]", "[%r3]"]
    for _ in range(300):
        imm = rng.choice(
            [0, 4, 8, 124, 128, 132, 4096, 1 << 20, (1 << 31) - 4, (1 << 32) - 4, rng.randrange(256)]
        )
        size = rng.choice([4, 64, 128, 4096])
        addr = rng.choice(forms).format(i=imm)
        delta = rng.choice(["0", "-4", "4", str(size), "%r1"])
        text = (f".visible .entry k()\n{{\n .shared .align 4 .b8 buf[{size}];\n mov.u32 %r1, %tid.x;\n"
                f" shl.b32 %r1, %r1, 2;\n mov.u32 %r2, buf;\n add.s32 %r3, %r2, {delta};\n"
                f" ld.shared.u32 %r4, {addr};\n st.shared.u32 [buf], %r4;\n}}\n")  # fmt: skip
        try:
            r = bankproof.kernel(text, block=rng.choice([1, 32, 64]), language="ptx")
        except InputError:
            continue
        assert r.verdict in ("proved", "refuted", "unknown"), r.verdict
        static = {"[buf+{i}]": imm, "[buf+-{i}]": -imm, "[buf-{i}]": -imm, "[{i}]": imm}
        form = next((f for f in static if f.format(i=imm) == addr), None)
        (ld,) = [i for i in r.instructions if i.instr.startswith("ld")]
        if form is not None and not 0 <= static[form] <= size - 4:  # outside buf: never proved
            assert ld.verdict != "proved", (addr, size, ld)


def test_a_lane_predicated_off_may_hold_a_negative_address():
    """Lanes 0-2 compute buf - 12 .. buf - 4 but do not load (their guard is off): counted as the
    active lanes read, never a crash (llm.c's softmax_forward_kernel4 at 256 threads did this)."""
    ptx = """.visible .entry k()
{
 .shared .align 4 .b8 buf[256];
 .reg .pred %p<2>;
 mov.u32 %r1, %tid.x;
 add.s32 %r2, %r1, -3;
 shl.b32 %r3, %r2, 2;
 mov.u32 %r4, buf;
 add.s32 %r5, %r4, %r3;
 setp.ge.u32 %p1, %r1, 3;
 @%p1 ld.shared.u32 %r6, [%r5];
}
"""
    r = bankproof.kernel(ptx, block=32, language="ptx")
    (line,) = r.instructions
    assert (r.verdict, line.wavefronts, line.ideal) == ("proved", 1, 1)


def test_a_module_level_visible_shared_symbol_is_placed():
    """numba declares its shared arrays at module scope as ``.visible .shared``: they are the CTA's
    shared memory like any other (they were not read, and every address through them was unknown)."""
    ptx = """.visible .shared .align 4 .b8 smem_1[128];
.visible .entry k()
{
 mov.u32 %r1, %tid.x;
 shl.b32 %r2, %r1, 2;
 mov.u64 %rd1, smem_1;
 cvt.u64.u32 %rd2, %r2;
 add.s64 %rd3, %rd1, %rd2;
 st.shared.u32 [%rd3], %r1;
}
"""
    r = bankproof.kernel(ptx, block=32, language="ptx")
    assert (r.verdict, r.instructions[0].wavefronts, r.shared_symbols) == ("proved", 1, {"smem_1": 0})
