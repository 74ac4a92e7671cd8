"""No output of a run overwrites an input of the same run (issue 54): ``--html`` onto the kernel's
``--ncu`` export or onto a header the source includes, ``--update-baseline`` with ``--baseline``
naming the kernels file; ``--update-baseline`` changes only the entries of the compiles this run
made, and keeps every other kernel's and arch's."""

from __future__ import annotations

import json

import pytest
from bankproof.verifier.cli.main import main

from tests import kernel_cases as kc

KERNEL = '#include "tile.h"\nextern "C" __global__ void k(float *o) { __shared__ float s[T]; s[threadIdx.x] = 1; o[0] = s[0]; }\n'


def test_html_onto_the_ncu_export_is_refused(tmp_path, capsys):
    ptx = tmp_path / "k.ptx"
    ptx.write_text(
        ".visible .entry k()\n{\n .shared .align 4 .b8 b[128];\n mov.u32 %r1, b;\n ld.shared.u32 %r2, [%r1];\n}\n"
    )
    export = tmp_path / "export.csv"
    export.write_text("kept as it was\n")
    assert main(["kernel", str(ptx), "--block", "32", "--ncu", str(export), "--html", str(export)]) == 2
    assert "--html" in capsys.readouterr().err and export.read_text() == "kept as it was\n"
    link = tmp_path / "link.html"
    link.symlink_to(export)
    assert main(["kernel", str(ptx), "--block", "32", "--ncu", str(export), "--html", str(link)]) == 2
    assert export.read_text() == "kept as it was\n"


@pytest.mark.skipif(not kc.have_nvrtc(), reason="needs the cuda extra (NVRTC)")
@pytest.mark.compile
def test_html_onto_an_included_header_is_refused(tmp_path, capsys):
    (tmp_path / "tile.h").write_text("#define T 32\n")
    (tmp_path / "k.cu").write_text(KERNEL)
    assert main(["kernel", str(tmp_path / "k.cu"), "--block", "32", "--html", str(tmp_path / "tile.h")]) == 2
    err = capsys.readouterr().err
    assert "is a file this run read" in err and (tmp_path / "tile.h").read_text() == "#define T 32\n"
    assert (
        main(["kernel", str(tmp_path / "k.cu"), "--block", "32", "--html", str(tmp_path / "page.html")]) == 0
    )
    assert (tmp_path / "page.html").read_text().startswith("<!doctype html>")


def test_update_baseline_onto_the_kernels_file_is_refused(tmp_path, capsys):
    kernels = tmp_path / "kernels.py"
    kernels.write_text("CONFIGS = []\n")
    argv = ["triton", "corpus", "--kernels", str(kernels), "--baseline", str(kernels), "--update-baseline"]
    assert main(argv) == 2
    assert "--baseline" in capsys.readouterr().err and kernels.read_text() == "CONFIGS = []\n"


def test_update_baseline_refuses_a_file_that_is_not_a_baseline(tmp_path, capsys):
    from bankproof.models.errors import InputError
    from bankproof.verifier.api.corpus import updated_baseline
    from bankproof.verifier.triton.results import CorpusResult

    notes = tmp_path / "notes.json"
    notes.write_text('{"mine": 1}')
    with pytest.raises(InputError, match="baseline"):
        updated_baseline(str(notes), CorpusResult(1, (), (), (), (), ()))


@pytest.mark.triton
@pytest.mark.compile
def test_update_baseline_changes_only_this_runs_compiles(tmp_path, capsys):
    pytest.importorskip("triton")
    from tests.test_triton_corpus import USER_KERNELS

    kernels = tmp_path / "kernels.py"
    kernels.write_text(USER_KERNELS)
    base = tmp_path / "base.json"
    others = {"other_kernel@sm90 a ttg.local_load #0": 64, "user_mm@sm90 a ttg.local_load #0": 32}
    stale = "user_mm@sm80 gone ttg.local_load #0"
    base.write_text(json.dumps({"schema": 1, "accesses": {**others, stale: 8}}))
    argv = ["triton", "corpus", "--arch", "sm80", "--kernels", str(kernels), "--baseline", str(base)]
    assert main([*argv, "--update-baseline"]) == 0
    got = json.loads(base.read_text())["accesses"]
    assert {k: got[k] for k in others} == others  # another kernel, another arch: kept
    assert stale not in got  # this run's compile no longer makes it
    assert any(k.startswith("user_mm@sm80 ") for k in got)
    assert "2 kept" in capsys.readouterr().err
