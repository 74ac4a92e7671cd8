"""Triton 3.9.0's MMA descriptors against its own nvmma_shared encodings: every wgmma (sm90) and
tcgen05.mma (sm100) operand descriptor of a corpus of matmuls (pointer and TMA loads; fp16, bf16,
fp8, tf32; 32/64/128-byte swizzles; K- and MN-major B), compiled here on the CPU, decodes to the
layout type and LBO/SBO bankproof derives from the encoding and reads the operand tile where the
encoding puts it; the TMA boxes that fill those buffers place every element there too."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

pytest.importorskip("triton")
from bankproof.models.access import element_offsets  # noqa: E402
from bankproof.models.engines.canonical import tma_tile  # noqa: E402
from bankproof.models.notation.triton_shared import NVMMAShared  # noqa: E402
from bankproof.verifier.triton.descriptors import check  # noqa: E402

from tests.triton_mma_kernels import CONFIGS, compile_config  # noqa: E402


@pytest.fixture(scope="module")
def compiled() -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {(arch, c): compile_config(c, arch) for arch in (90, 100) for c in CONFIGS}


def test_every_descriptor_matches_its_encoding(compiled, capsys):
    total, kinds = 0, set()
    for (arch, config), (ttgir, ptx) in compiled.items():
        checks = check(ttgir, ptx, f"sm{arch}")
        assert checks, config
        for c in checks:
            assert c.ok is True, (arch, config, c)
            kinds.add(
                (arch, c.decoded["swizzle"], c.expected["major"], re.search(r"(\d+)-bit", c.encoding)[1])
            )
        total += len(checks)
    with capsys.disabled():
        print(f"\n  Triton descriptors: {total} operand descriptors of {len(compiled)} compiles decode to the "
              f"encoding's layout; {len(kinds)} (arch, swizzle, major, width) kinds")  # fmt: skip
    assert total == 238
    assert {k[1] for k in kinds} == {"32B", "64B", "128B"} and {k[2] for k in kinds} == {"K", "MN"}
    assert {k[3] for k in kinds} == {"8", "16", "32"} and {k[0] for k in kinds} == {90, 100}


def test_a_wrong_constant_is_caught(compiled):
    ttgir, ptx = compiled[(90, CONFIGS[0])]
    value = 4611686293305294848  # 128B, SBO 1024: Triton's A/B constant in this kernel
    assert str(value) in ptx
    wrong = ptx.replace(str(value), str(value + (1 << 32)))  # SBO 1040
    bad = [c for c in check(ttgir, wrong, "sm90") if c.ok is False]
    assert bad and all("sbo 1040 != 1024" in c.why for c in bad)


def test_tma_boxes_fill_the_encoding(compiled):
    """Each TMA kernel's buffers: boxes one span wide place every element where the nvmma encoding
    does, so the TMA write and the descriptor read agree."""
    seen = 0
    for (arch, config), (ttgir, _) in compiled.items():
        if config[0] != "mm_tma":
            continue
        assert "async_tma_copy_global_to_local" in ttgir
        for m in re.finditer(r"memdesc<(\d+)x(\d+)x[a-z]\w*, #(shared\d*)", ttgir):
            enc_text = re.search(rf"^#{m[3]} = (#ttg\.nvmma_shared<.*>)$", ttgir, re.M)
            if not enc_text:
                continue
            sw, tr, bits = (int(re.search(r"swizzlingByteWidth = (\d+)", enc_text[1])[1]),
                            "transposed = true" in enc_text[1], int(re.search(r"elementBitWidth = (\d+)", enc_text[1])[1]))  # fmt: skip
            shape = [int(m[1]), int(m[2])]
            off = element_offsets(NVMMAShared(sw, tr, bits).to_layout(shape)) * bits // 8
            rows, cols = shape if not tr else shape[::-1]
            box = tma_tile(f"{sw}B", bits, "K", rows, cols)
            r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
            assert (box.address(r, c, 0) == (off if not tr else off.T)).all(), (arch, config, shape)
            seen += 1
    assert seen >= 6


def test_scan_with_ptx_checks_descriptors(compiled, tmp_path):
    """``bankproof triton scan K.ttgir --ptx K.ptx`` reports the descriptors and exits 4 on a wrong
    one (the counts rest on the operand layout the descriptor reads)."""
    from bankproof.verifier.cli.main import main

    ttgir, ptx = compiled[(90, CONFIGS[0])]
    (tmp_path / "k.ttgir").write_text(ttgir)
    (tmp_path / "k.ptx").write_text(ptx)
    (tmp_path / "bad.ptx").write_text(
        ptx.replace("4611686293305294848", str(4611686293305294848 + (1 << 32)))
    )
    base = ["triton", "scan", str(tmp_path / "k.ttgir"), "--allow-unknown", "--json", "--ptx"]
    import io
    import json as js

    out = io.StringIO()
    assert main([*base, str(tmp_path / "k.ptx")], out, io.StringIO()) == 0
    assert js.loads(out.getvalue())["reports"][0]["descriptors"] == {"checked": 16, "agree": 16, "undecided": 0,
                                                                    "mismatches": []}  # fmt: skip
    err = io.StringIO()
    assert main([*base, str(tmp_path / "bad.ptx")], io.StringIO(), err) == 4
    assert "sbo 1040 != 1024" in err.getvalue()
