"""Nothing given is taken silently (issue 54): a value given twice (``--arg`` by position and by
name, ``--open``, ``--block``, ``--tensor-map``, ``--weights`` naming a cost twice, ``--define``
with two values) is refused naming the flag; a tensor map's every error names ``--tensor-map``
(a 0x0 box too, read or not); an ``--ncu`` export of another function is an input error, not the
model's disagreement; a time limit inside ``--open`` reads as words, not "None"; a PTX label
defined twice and a launch its ``.reqntid``/``.maxntid`` forbids are refused."""

from __future__ import annotations

import pytest
from bankproof.models.errors import InputError
from bankproof.verifier.cli.main import main

import bankproof

PTX = """.visible .entry k(.param .u32 n)
{
 .reg .b32 %r<9>;
 .shared .align 4 .b8 buf[4096];
 ld.param.u32 %r9, [n];
 mov.u32 %r1, %tid.x;
 mul.lo.s32 %r2, %r1, %r9;
 and.b32 %r2, %r2, 1023;
 shl.b32 %r3, %r2, 2;
 mov.u32 %r4, buf;
 add.s32 %r5, %r4, %r3;
 ld.shared.u32 %r6, [%r5];
 st.shared.u32 [buf], %r6;
}
"""


@pytest.fixture()
def ptx(tmp_path):
    f = tmp_path / "k.ptx"
    f.write_text(PTX)
    return str(f)


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--arg", "0=1", "--arg", "n=2"], "--arg gives parameter 0 twice (as 0 and n)"),
        (["--arg", "n=1", "--arg", "n=2"], "--arg gives one parameter twice"),
        (["--open", "n=1..4", "--open", "n=1..2"], "--open is given twice"),
        (["--open", "0=1..4", "--arg", "n=2"], "--open names an argument --arg also gives"),
        (["--block", "32", "--block", "64"], "--block is given twice"),
        (["--time-limit", "5", "--time-limit", "6"], "--time-limit is given twice"),
        (["--define", "A=1", "--define", "A=2"], "--define gives one name two values"),
        (
            ["--tensor-map", "n=128B,64x64,bf16", "--tensor-map", "n=64B,64x32,bf16"],
            "--tensor-map gives one tensor map twice",
        ),
        (["--tensor-map", "n=128B,0x0,bf16"], "--tensor-map n: box rows must be 1 to 256"),
        (["--tensor-map", "n=128B,64x64,bf17"], "--tensor-map n: dtype"),
        (
            ["--tensor-map", "n=32B,64x64,bf16"],
            "--tensor-map n: box inner dimension exceeds the 32B swizzle span",
        ),
    ],
)
def test_refused_naming_the_flag(ptx, capsys, argv, needle):
    full = ["kernel", ptx, "--block", "32", *argv] if "--block" not in argv else ["kernel", ptx, *argv]
    try:
        code = main(full)
    except SystemExit as e:  # argparse's own refusal
        code = e.code
    assert code == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err, err


def test_weights_naming_a_cost_twice(capsys):
    argv = [
        "synth",
        "examples/transpose_16x32_plain.toml",
        "--padded",
        "--weights",
        "wavefronts=1,wavefronts=2",
    ]
    assert main(argv) == 2 and "--weights names one cost twice" in capsys.readouterr().err


def test_the_api_refuses_a_map_and_an_argument_given_twice():
    with pytest.raises(InputError, match="twice"):
        bankproof.kernel(PTX, block=32, language="ptx", args={"0": 1, "n": 2})
    box = {"tma": "128B", "box": [64, 64], "dtype": "bf16"}
    with pytest.raises(InputError, match="tensor map twice"):
        bankproof.kernel(PTX, block=32, language="ptx", args={"n": 1}, tensor_maps={"0": box, "n": box})


def test_a_time_limit_inside_open_reads_as_words(ptx, capsys):
    slow = PTX.replace(" ld.shared.u32 %r6, [%r5];", "$L:\n ld.shared.u32 %r6, [%r5];\n bra $L;")
    f = ptx.replace("k.ptx", "slow.ptx")
    with open(f, "w") as fh:
        fh.write(slow)
    assert main(["kernel", f, "--block", "32", "--open", "n=1..1", "--time-limit", "1"]) == 3
    out = capsys.readouterr().out
    assert "(1 value, one CTA run for it)" in out and "None" not in out
    assert "an unknown number of instructions" in out


def test_a_label_defined_twice_and_a_launch_the_kernel_forbids():
    twice = PTX.replace(" mov.u32 %r1, %tid.x;", "$L:\n mov.u32 %r1, %tid.x;\n$L:")
    with pytest.raises(InputError, match="defines one label twice"):
        bankproof.kernel(twice, block=32, language="ptx", args={"n": 1})
    req = PTX.replace("{\n .reg", ".reqntid 64\n{\n .reg", 1)
    with pytest.raises(InputError, match=r"contradicts the kernel's .reqntid 64"):
        bankproof.kernel(req, block=32, language="ptx", args={"n": 1})
    assert bankproof.kernel(req, block=64, language="ptx", args={"n": 1}).verdict == "proved"
    most = PTX.replace("{\n .reg", ".maxntid 64, 1, 1\n{\n .reg", 1)
    with pytest.raises(InputError, match=r"more threads than the kernel's .maxntid 64x1x1"):
        bankproof.kernel(most, block=128, language="ptx", args={"n": 1})


@pytest.mark.gpu_replay
def test_an_export_of_another_function_is_an_input_error(tmp_path, capsys):
    import gzip
    import json

    from tests.test_kernel_truth import RECORD

    rec = next(c for c in json.loads(gzip.decompress(RECORD.read_bytes()))["cases"]
               if c["name"] == "transpose_naive_tile")  # fmt: skip
    ptx, export = tmp_path / "t.ptx", tmp_path / "t.csv"
    ptx.write_text(rec["ptx_text"])
    export.write_text(rec["source_csv"].replace("transpose_naive_tile", "another_kernel"))
    argv = ["kernel", str(ptx), "--kernel", "transpose_naive_tile", "--block", "32x8", "--arg", "2=1024"]
    assert main([*argv, "--ncu", str(export)]) == 2
    assert (
        "--ncu is an export of another_kernel, not of kernel transpose_naive_tile" in capsys.readouterr().err
    )
