"""The engines' address functions (models/engines): TMA swizzle modes as XORs on the byte address,
the wgmma/tcgen05 descriptors decoded and encoded, and the tile a descriptor reads checked against
Triton's ``nvmma_shared`` layout (bankproof's reading of it, itself checked against Triton)."""

from __future__ import annotations

import numpy as np
import pytest
from bankproof.models.access import element_offsets
from bankproof.models.engines.descriptors import Descriptor, decode, encode, read_addresses
from bankproof.models.engines.tma import MODES, box_check, mode, swizzle
from bankproof.models.errors import InputError
from bankproof.models.notation.triton_shared import NVMMAShared


@pytest.mark.parametrize("name", ["32B", "64B", "128B", "128B_atom32"])
def test_modes_are_involutions_within_their_period(name):
    m = MODES[name]
    a = np.arange(4 * m.period)
    s = swizzle(m, a)
    assert (swizzle(m, s) == a).all()
    assert sorted(s[: m.period].tolist()) == list(range(m.period))  # a permutation of each period
    assert (s // m.span == a // m.span).all()  # bytes stay in their swizzled row


def test_mode_bits_are_the_ptx_tables():
    """32B: a[4] ^= a[7]; 64B: a[5:4] ^= a[8:7]; 128B: a[6:4] ^= a[9:7]; Blackwell 128B with 32-byte
    atoms: a[6:5] ^= a[8:7]."""
    for name, flips in {"32B": {4: 7}, "64B": {4: 7, 5: 8}, "128B": {4: 7, 5: 8, 6: 9},
                        "128B_atom32": {5: 7, 6: 8}}.items():  # fmt: skip
        for src in range(12):
            got = swizzle(MODES[name], 1 << src)
            want = (1 << src) | sum(1 << lo for lo, hi in flips.items() if hi == src)
            assert got == want, (name, src, got, want)


def test_box_wider_than_the_span_is_refused():
    box_check(mode("128B"), 128)
    with pytest.raises(InputError, match="inner box dimension must be <= the swizzle size"):
        box_check(mode("64B"), 128)


@pytest.mark.parametrize("arch", ["sm90", "sm100"])
def test_decode_encode_round_trip(arch):
    rng = np.random.default_rng(3)
    names = ["none", "32B", "64B", "128B"] + (["128B_atom32"] if arch == "sm100" else [])
    for _ in range(200):
        d = Descriptor(arch, *(int(rng.integers(0, 1 << 14)) << 4 for _ in range(3)), int(rng.integers(0, 8)),
                       MODES[names[int(rng.integers(0, len(names)))]], int(rng.integers(0, 2)) if arch == "sm100" else 0)  # fmt: skip
        assert decode(encode(d), arch) == d


def test_codes_follow_each_arch():
    """sm90 swizzle bits 62-63: 1 = 128B, 2 = 64B, 3 = 32B (the reverse of TMA's); sm100 bits 61-63:
    1 = 128B with 32-byte atoms, 2 = 128B, 4 = 64B, 6 = 32B, with 0b001 at bits 46-48."""
    assert [decode(c << 62, "sm90").swizzle.name for c in range(4)] == ["none", "128B", "64B", "32B"]
    fixed = 1 << 46
    assert [decode(fixed | c << 61, "sm100").swizzle.name for c in (0, 1, 2, 4, 6)] == \
        ["none", "128B_atom32", "128B", "64B", "32B"]  # fmt: skip
    for bad in (3, 5, 7):
        with pytest.raises(InputError, match="3, 5 and 7 are invalid"):
            decode(fixed | bad << 61, "sm100")
    with pytest.raises(InputError, match="0b001"):
        decode(2 << 61, "sm100")
    with pytest.raises(InputError, match="bits 53-60 must be 0"):
        decode(fixed | 2 << 61 | 1 << 55, "sm100")


@pytest.mark.parametrize("span", [32, 64, 128])
@pytest.mark.parametrize("bits", [8, 16, 32])
def test_k_major_descriptor_reads_the_nvmma_tile(span, bits):
    """A 64-row K-major tile in Triton's nvmma_shared (swizzle = span): each wgmma K step (32 bytes)
    reads through a descriptor whose start advances 32 bytes, SBO = 8 rows of the span; every
    element's address equals the layout's (the swizzle on the absolute address gives the phase)."""
    cols = span * 8 // bits
    off = element_offsets(NVMMAShared(span, False, bits).to_layout([64, cols])) * bits // 8
    k = 32 * 8 // bits
    for step in range(span // 32):
        d = Descriptor("sm90", 32 * step, 16, 8 * span, 0, MODES[f"{span}B"])
        got = read_addresses(decode(encode(d), "sm90"), "K", bits, 64)
        assert (got == off[:, step * k : (step + 1) * k]).all(), step


def test_cli_json_carries_its_schema(capsys):
    import json

    from bankproof.verifier.cli.main import main

    assert main(["descriptor", "0x4000004000010040", "--arch", "sm90", "--rows", "16", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["schema"], got["arch"], got["value"], got["swizzle"]) == (
        2,
        "sm90",
        "0x4000004000010040",
        "128B",
    )
    assert list(got)[0] == "schema"


def test_cli_decodes_and_refuses(capsys):
    from bankproof.verifier.cli.main import main

    assert main(["descriptor", "0x4000004000010040", "--arch", "sm90", "--rows", "16"]) == 0
    out = capsys.readouterr().out
    assert "swizzle 128B (Sw<3,4,3> on byte addresses)" in out and "1024 1168 1312" in out
    for bad in (["0x4000004000010040", "--arch", "sm100"], ["zz", "--arch", "sm90"],
                ["0x1", "--arch", "sm90", "--dtype", "f64"], [str(1 << 64), "--arch", "sm90"],
                ["0x4000004000010040", "--arch", "sm90", "--rows", "12"]):  # fmt: skip
        assert main(["descriptor", *bad]) == 2, bad
        err = capsys.readouterr().err
        assert err.startswith("bankproof: descriptor") and "Traceback" not in err


def test_cli_encodes_fields_and_applies_operand_rules(capsys):
    """The PTX worked example (MN-major 64B bf16, LBO 32 and SBO 64 in 16-byte units) encodes to
    0x8000004000200000; an MN-major 8-bit operand on sm90 and an unknown swizzle are refused."""
    from bankproof.verifier.cli.main import main

    args = ["descriptor", "--arch", "sm90", "--fields", "start=0,lbo=512,sbo=1024,swizzle=64B", "--major", "MN",
            "--dtype", "bf16"]  # fmt: skip
    assert main(args) == 0
    assert capsys.readouterr().out.startswith("sm90 descriptor 0x8000004000200000")
    for bad, field in ((["0x8000004000200000", "--arch", "sm90", "--major", "MN", "--dtype", "e4m3"], "MN-major"),
                       (["--arch", "sm100", "--fields", "swizzle=9"], "swizzle must be one of"),
                       (["--arch", "sm90", "--fields", "lbo=7"], "multiple of 16"),
                       (["--arch", "sm90", "--fields", "x"], "NAME=VALUE"),
                       (["--arch", "sm90"], "give the 64-bit value or --fields")):  # fmt: skip
        assert main(["descriptor", *bad]) == 2, bad
        err = capsys.readouterr().err
        assert field in err and "Traceback" not in err, err


def test_cli_decodes_what_it_does_not_model_and_says_so(capsys):
    from bankproof.verifier.cli.main import main

    assert (
        main(["descriptor", "0x2000402000000040", "--arch", "sm100", "--major", "MN", "--dtype", "tf32"]) == 0
    )
    out = capsys.readouterr().out
    assert "swizzle 128B_atom32" in out and "not modelled" in out and "tile read" not in out
    assert "published for sm100, not measured" in out


def test_cli_encodes_a_mode_it_does_not_read(capsys):
    """--fields only encodes: 128B with 32-byte atoms encodes (the read is what is not modelled)."""
    from bankproof.verifier.cli.main import main

    args = ["descriptor", "--arch", "sm100", "--fields", "start=0,lbo=16,sbo=512,swizzle=128B_atom32", "--major",
            "MN", "--dtype", "tf32"]  # fmt: skip
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.startswith("sm100 descriptor 0x2000402000010000") and "not modelled" in out
