"""The ``bankproof`` command: acceptance outputs, JSON schema, and bad input -> exit 2."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from bankproof.verifier.cli.main import main

ROOT = Path(__file__).resolve().parent.parent

SWZ = "#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 16, order = [1, 0]}>"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_layout_json_acceptance(capsys):
    code, out, _ = run(capsys, "layout", SWZ, "--shape", "16x32", "--json")
    assert code == 0
    r = json.loads(out)
    assert r["kind"] == "memory" and r["linear"] is True and r["valid"] is True
    assert r["in_dims"] == {
        "offset": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [1, 2], [2, 4], [4, 8], [8, 16]]
    }
    assert r["out_dims"] == {"dim0": 16, "dim1": 32}
    assert r["notations"]["formula"] == "32*m + (n ^ (2*m))"


def test_layout_text_prints_formula(capsys):
    code, out, _ = run(capsys, "layout", SWZ, "--shape", "16x32")
    assert code == 0
    assert "offset(m, n) = 32*m + (n ^ (2*m))" in out
    assert "valid:    yes (Def 4.14)" in out


def test_layout_distributed_json(capsys):
    blocked = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>"
    code, out, _ = run(capsys, "layout", blocked, "--shape", "16x32", "--json")
    r = json.loads(out)
    assert code == 0 and r["kind"] == "distributed"
    assert r["in_dims"] == {
        "register": [[1, 0], [2, 0], [4, 0], [8, 0]],
        "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]],
        "warp": [],
        "block": [],
    }


def test_layout_banks(capsys):
    code, out, _ = run(capsys, "layout", "Sw<3,2,3> o (8,8):(1,8)", "--dtype", "f32", "--banks")
    assert code == 0
    assert "r0     B00   B08   B16   B24   B04   B12   B20   B28" in out


def test_padded_layout(capsys):
    code, out, _ = run(
        capsys,
        "layout",
        "#ttg.padded_shared<[32:+4] {order = [1, 0], shape = [16, 16]}>",
        "--shape",
        "16x16",
        "--json",
    )
    r = json.loads(out)
    assert code == 0 and r["linear"] is False and r["padding"] == [[32, 4]] and r["span_elements"] == 284


BAD = [
    (
        ["layout", SWZ.replace("16", "6"), "--shape", "16x32"],
        "swizzled_shared: maxPhase must be a power of two, got 6",
    ),
    (["layout", SWZ, "--shape", "16x24"], "shape: value sizes must be powers of two, got 16x24"),
    (["layout", SWZ, "--shape", "sixteen"], "shape: value must look like 16x32"),
    (["layout", SWZ], "layout: --shape is required"),
    (["layout", SWZ, "--shape", "16x32", "--dtype", "f13"], "dtype: name is unknown"),
    (["layout", "Sw<3,2,2> o (8,8):(1,8)"], "cute: Swizzle S must satisfy |S| >= B"),
    (["layout", "Sw<3,4,3> o (8,64):(64,1)", "--units", "byte"], "cute: dtype is required with byte units"),
    (
        [
            "layout",
            "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [12], warpsPerCTA = [1], order = [0]}>",
            "--shape",
            "32",
        ],
        "blocked: threadsPerWarp entries must be powers of two, got [12]",
    ),
    (["layout", '{"offset": [[1]]}', "--shape", "2x2"], "bases: offset bases must have 2 coordinates"),
    (["layout", "m + 2*n", "--shape", "8x8"], "formula: layout is not a bijection"),
    (["layout", "m + 8*n", "--shape", "8x8", "--dims", "a b"], "layout: --dims must be identifiers"),
    (["layout", "", "--shape", "8x8"], "layout: notation is empty"),
    (["layout", SWZ, "--shape", "65536x65536"], "shape: value has 2^32 elements, over the limit of 2^30"),
    (
        [
            "layout",
            "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>",
            "--shape",
            "16x32",
            "--banks",
        ],
        "layout: --banks needs a memory layout",
    ),
    (
        ["layout", "#ttg.linear<{register = " + "[" * 5000 + "]" * 5000 + "}>", "--shape", "4"],
        "triton: attribute nests deeper than 32 levels",
    ),
    (["layout", "(" * 5000 + "8" + ")" * 5000 + ":(1)"], "cute: layout nests deeper than 32 levels"),
    (["layout", "m" + "+m" * 3000, "--shape", "8"], "formula: text is too long"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["layout"], "the following arguments are required: notation"),
]


@pytest.mark.parametrize(("argv", "message"), BAD)
def test_bad_input_exit_2_with_message(capsys, argv, message):
    with pytest.raises(SystemExit) as e:
        code = main(argv)
        raise SystemExit(code)
    _, err = capsys.readouterr()
    assert e.value.code == 2
    assert message in err
    assert "Traceback" not in err


def test_console_script_has_no_traceback():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bankproof.verifier.cli.main",
            "layout",
            "#ttg.swizzled_shared<{vec = 3}>",
            "--shape",
            "4x4",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == "bankproof: swizzled_shared: vec must be a power of two, got 3"


@pytest.mark.skipif(
    importlib.util.find_spec("cupy") is not None, reason="a GPU machine: the device runs cover it"
)
def test_gpu_without_cupy_is_a_clear_input_error(capsys):
    spec = Path(__file__).resolve().parent.parent / "examples" / "transpose_16x32_xor_2m.toml"
    assert main(["gpu", str(spec)]) == 2
    assert "gpu: device needs CuPy and a CUDA GPU" in capsys.readouterr().err


def test_api_errors_name_arguments_and_the_cli_names_flags(capsys):
    """The API says ``instruction``/``arch`` (its arguments); the command says the flag the user
    typed, but only for what the command itself refused: a spec file's field keeps its name."""
    import bankproof

    plain = str(ROOT / "examples" / "transpose_16x32_plain.toml")
    with pytest.raises(bankproof.InputError, match=r"^show: instruction must be in \[0, 16\), got 99$"):
        bankproof.show(spec=plain, instruction=99)
    with pytest.raises(bankproof.InputError, match="^wavefronts: arch must be one of"):
        bankproof.wavefronts("ld32", [0] * 32, arch="sm70")
    assert main(["show", plain, "--instruction", "99"]) == 2
    assert "show: --instruction must be in [0, 16), got 99" in capsys.readouterr().err
    assert main(["wavefronts", "--input", "-", "--arch", "sm70"]) == 2
    assert capsys.readouterr().err.startswith("bankproof: wavefronts: --arch must be one of")
    assert main(["gpu", str(ROOT / "examples" / "amd_mi300_gemm_a_plain.toml")]) == 2
    assert "gpu: arch is an" in capsys.readouterr().err  # from the spec file: no --arch flag here


@pytest.mark.slow
def test_ctrl_c_stops_a_command_at_once_with_exit_130():
    """SIGINT in the middle of a proof (Z3 deep in C code) stops the program within 2 s: one line
    on stderr, exit 130, no traceback."""
    import shutil
    import signal
    import subprocess
    import sys
    import time

    exe = shutil.which("bankproof", path=str(Path(sys.executable).parent))
    spec = str(ROOT / "examples" / "hopper_nvmma_128b_f16.toml")
    p = subprocess.Popen([exe, "synth", spec], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.6)  # the synth takes about 2.4 s on a 2-core machine
    t = time.perf_counter()
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130 and time.perf_counter() - t < 2
    assert err.decode() == "bankproof: interrupted\n"


@pytest.mark.parametrize(
    ("argv", "points_at"),
    [(["frobnicate"], "'bankproof --help'"), (["layout"], "'bankproof layout --help'"),
     (["agree"], "'bankproof agree --help'"), (["triton", "scan"], "'bankproof triton scan --help'")],
)  # fmt: skip
def test_usage_errors_point_at_the_commands_own_help(capsys, argv, points_at):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert points_at in capsys.readouterr().err


def test_agree_help_lists_every_exit_code(capsys):
    with pytest.raises(SystemExit):
        main(["agree", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Exit 0 agree, 1 mismatch, 2 bad input, 3 unknown, 4 the engines disagree" in text


def test_the_kernels_file_format_in_the_help_is_the_readers():
    """``triton corpus --help`` documents the kernels file: every field the reader checks, its
    defaults as the compile takes them, the archs it knows, and an example the reader accepts."""
    import ast
    import re

    from bankproof.models import target
    from bankproof.verifier.cli.formats import KERNELS_FILE_HELP
    from bankproof.verifier.triton.corpus import CONFIG_FIELDS, check_config

    for field in CONFIG_FIELDS:
        assert re.search(rf"^  {field}\s", KERNELS_FILE_HELP, re.M), field
    assert ", ".join(target.ARCHS) in KERNELS_FILE_HELP
    assert re.search(r"num_warps .* default 4$", KERNELS_FILE_HELP, re.M)
    assert re.search(r"num_stages .* default 3$", KERNELS_FILE_HELP, re.M)
    example = KERNELS_FILE_HELP.split("CONFIGS = ", 1)[1].split("]}]", 1)[0] + "]}]"
    for i, config in enumerate(ast.literal_eval(" ".join(example.split()))):
        check_config(config, i)


def test_the_docs_show_the_kernels_file_format_as_the_help_does():
    from pathlib import Path

    from bankproof.verifier.cli.formats import KERNELS_FILE_HELP

    docs = Path(__file__).resolve().parents[1] / "docs"
    for page in ("reference/formats/kernels.md",):
        assert "```text\n" + KERNELS_FILE_HELP + "\n```" in (docs / page).read_text(encoding="utf-8"), page


def test_a_bad_wavefronts_line_does_not_cost_the_good_ones(tmp_path, capsys):
    import json

    good = json.dumps({"instr": "ld32", "byte_offsets": [0] * 32})
    lines = [good, '{"instr": "ld32", "byte_offsets": [1]}', "not json", good, "", json.dumps(
        {"instr": "ld64", "byte_offsets": [4] * 32})]  # misaligned for ld64  # fmt: skip
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert main(["wavefronts", "--input", str(path)]) == 2
    out, err = capsys.readouterr()
    got = [json.loads(x) for x in out.splitlines()]
    assert [g.get("line") for g in got] == [None, 2, 3, None, 6]
    assert got[0]["wavefronts"] == got[3]["wavefronts"] == 1
    assert "byte_offsets must be a list of 32 integers" in got[1]["error"]
    assert got[2]["error"].startswith("line 3: json") and "8-byte aligned" in got[4]["error"]
    assert err.count("bankproof: line ") == 3 and "Traceback" not in err
    path.write_text(good + "\n" + good + "\n")
    assert main(["wavefronts", "--input", str(path)]) == 0
    assert [json.loads(x)["wavefronts"] for x in capsys.readouterr().out.splitlines()] == [1, 1]
