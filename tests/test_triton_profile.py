"""``bankproof triton profile``: Nsight Compute source pages of 24 launches recorded on an H200
(``gpu_checks/results/h200-2026-11-26-profile-exports.json``: 16 corpus kernels, 8 control-flow
runs), joined with the ledger line by line. Every line the ledger models (wgmma operand reads
included, where SASS puts them on a wgmma's line) reproduces its measured wavefronts from its
measured executions (HGMMA that SASS attributes to other lines pooled, each instruction once); lines
it does not model (shared atomics, rule-counted tensor-map fills) are named with the reason."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import pytest
from bankproof.gpu_checks.results import RESULTS
from bankproof.gpu_checks.source_page import read_export
from bankproof.models.errors import InputError
from bankproof.verifier.cli.main import main
from bankproof.verifier.triton import ledger
from bankproof.verifier.triton.profile import explain
from bankproof.verifier.triton.scan import scan_text

RECORD = json.loads((RESULTS / "h200-2026-11-26-profile-exports.json").read_text())
DATA = Path(__file__).resolve().parent / "data" / "control_flow"
SOURCE = {"both_arms_then": "both_arms", "both_arms_else": "both_arms", "decided_branch_3x2": "decided_branch",
          "early_return_4": "early_return", "flat_persistent_4x3": "flat_persistent", "min_loop_100": "min_loop",
          "min_loop_1000": "min_loop", "loaded_loop_192": "loaded_loop"}  # fmt: skip
RUNS_ARM = {
    "decided_branch_3x2": {"program_id_x": 2, "program_id_y": 1},
    "early_return_4": {"program_id_x": 1},
}


def _lines(export: dict, ttgir: str, ptx: str, args: dict) -> list[dict]:
    rows = explain(ledger.build(scan_text(ttgir), ttgir, ptx, args), read_export(export["csv"]))
    return [r.to_dict() for r in rows]  # the JSON a user reads


def _check(lines: list[dict]) -> int:
    for r in lines:
        if r["modelled"]:
            assert r["agrees"], r
            assert r["predicted_wavefronts"] == r["measured_wavefronts"]
        else:
            assert r["reason"]
    return sum(r["modelled"] for r in lines)


@pytest.mark.parametrize("export", [e for e in RECORD["exports"] if e["origin"] == "control_flow"],
                         ids=lambda e: e["name"])  # fmt: skip
def test_control_flow_launches_are_explained_line_by_line(export):
    kernel = SOURCE[export["name"]]
    ttgir, ptx = ((DATA / f"{kernel}.{x}").read_text() for x in ("ttgir", "ptx"))
    lines = _lines(export, ttgir, ptx, {**export["args"], **RUNS_ARM.get(export["name"], {})})
    assert _check(lines) >= 2
    if kernel == "loaded_loop":  # the trip count came from memory: the measured executions supply it
        reduce = next(r for r in lines if r["class"] == "st" and r["location"].startswith("standard.py"))
        assert reduce["executions_measured"] == 3 and reduce["executed_static"] is None


@pytest.mark.compile
@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="needs the triton extra")
def test_sixteen_corpus_kernels_every_modelled_line_agrees():
    from bankproof.verifier.triton import corpus

    configs = {c["name"]: c for c in corpus.builtin_configs()}
    exports = [e for e in RECORD["exports"] if e["origin"] == "corpus"]
    modelled, kernels, reasons, pooled = 0, 0, set(), 0
    for e in exports:
        ttgir, ptx = corpus.compile_kernel(configs[e["name"]], "sm90")
        lines = _lines(e, ttgir, ptx, {**e["args"], **ledger.ONE_CTA})
        n = _check(lines)
        modelled, kernels = modelled + n, kernels + (n > 0)
        reasons |= {r["reason"].split(" (")[0].split(",")[0] for r in lines if not r["modelled"]}
        pooled += sum("note" in r for r in lines)
    assert (len(exports), kernels, modelled, pooled) == (16, 15, 56, 4)
    # HGMMA that SASS places on other lines (an inlined helper's, listed under each line of its
    # chain) are compared pooled, each instruction once; nothing is left unowned for that reason
    assert "no wgmma of the ledger owns this line's operand reads" not in " ".join(reasons)


def _export_text(name: str) -> str:
    return next(e["csv"] for e in RECORD["exports"] if e["name"] == name)


def test_cli_exit_0_when_every_line_agrees_and_4_when_one_differs(tmp_path, capsys):
    ttgir, ptx = DATA / "min_loop.ttgir", DATA / "min_loop.ptx"
    good = tmp_path / "good.csv"
    good.write_text(_export_text("min_loop_100"))
    args = ["triton", "profile", str(ttgir), "--ptx", str(ptx), "--ncu", str(good), "--arg", "K=100"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "standard.py:314" in out and "predicted =" in out and "DIFFERS" not in out
    bad = tmp_path / "bad.csv"  # one LDS line's wavefronts doubled: a conflict the model does not predict
    rows = list(csv.reader(_export_text("min_loop_100").splitlines()))
    col = next(r for r in rows if r[0] == "Line No").index("L1 Wavefronts Shared")
    row = next(r for r in rows if len(r) > 3 and "LDS.128" in r[3])
    row[col] = str(2 * int(row[col]))
    with bad.open("w", newline="") as fh:
        csv.writer(fh, quoting=csv.QUOTE_ALL).writerows(rows)
    assert main([*args[:6], str(bad), *args[7:]]) == 4
    assert "DIFFERS" in capsys.readouterr().out


def test_exports_without_line_info_or_counters_are_refused():
    with pytest.raises(InputError, match="--print-source cuda,sass"):
        read_export(
            '"Kernel Name","k",\n"Address","Source","Instructions Executed"\n"0x0","  LDS R1, [R2]","4"\n'
        )
    with pytest.raises(InputError, match="--section SourceCounters"):
        read_export('"File Path","/k.py"\n"Line No","Source","Address","Source","Instructions Executed"\n')


def test_every_warpgroup_mma_opcode_is_op_gmma():
    """SASS spells wgmma per operand type: HGMMA (f16/bf16/tf32), QGMMA (fp8), IGMMA (int8); each
    reads shared operands counted under op_gmma (an fp8 TMA matmul's QGMMA lines were once 'other')."""
    from bankproof.gpu_checks.source_page import sass_class

    for sass in (
        "HGMMA.64x64x16.F32 R24, gdesc[UR8], R24",
        "QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24",
        "IGMMA.64x64x32.S32.S8.S8 R24, gdesc[UR4], R24",
        "@P0 QGMMA.64x64x32.F32.E5M2.E5M2 R2, gdesc[UR4], R2",
    ):
        assert sass_class(sass) == "gmma", sass
    assert sass_class("LDSM.16.MT88.4 R4, [R2]") == "ldsm" and sass_class("STS.128 [R1], R4") == "st"


@pytest.mark.parametrize("value", ["abc", "-5", "nan", "inf", "1e400", "3.5", "9" * 40])
def test_a_counter_that_is_not_a_count_is_refused_naming_its_row(value):
    rows = list(csv.reader(_export_text("min_loop_100").splitlines()))
    col = next(r for r in rows if r[0] == "Line No").index("Instructions Executed")
    at = next(i for i, r in enumerate(rows) if len(r) > 3 and "LDS.128" in r[3])
    rows[at][col] = value
    with pytest.raises(InputError, match=f"row {at + 1}: Instructions Executed must be a count"):
        read_export("\n".join(",".join(f'"{c}"' for c in r) for r in rows))


def test_a_junk_line_number_and_a_huge_field_are_refused():
    text = _export_text("min_loop_100")
    with pytest.raises(InputError, match="Line No must be a count"):
        read_export(text.replace('"287","', '"x287","', 1))
    with pytest.raises(InputError, match="is not CSV as ncu writes it"):
        read_export(text + '\n"","","0x1","' + "A" * (1 << 20) + '","1","0","1","1"\n')


def test_another_kernels_export_or_ptx_is_refused(tmp_path, capsys):
    """Another kernel's export (its Function Name and files), or another kernel's PTX beside the
    TTGIR, once read as agreeing: exit 2 with the reason."""
    ttgir, ptx = DATA / "min_loop.ttgir", DATA / "min_loop.ptx"
    other = tmp_path / "other.csv"
    other.write_text(next(e["csv"] for e in RECORD["exports"] if e["origin"] != "control_flow"))
    args = ["triton", "profile", str(ttgir), "--ptx", str(ptx), "--ncu", str(other), "--arg", "K=100"]
    assert main(args) == 2
    assert "export is a profile of" in capsys.readouterr().err
    renamed = tmp_path / "renamed.ptx"
    renamed.write_text(ptx.read_text().replace(".entry min_loop", ".entry other_kernel"))
    good = tmp_path / "good.csv"
    good.write_text(_export_text("min_loop_100"))
    assert main([*args[:4], str(renamed), "--ncu", str(good), "--arg", "K=100"]) == 2
    assert "--ptx is kernel other_kernel, the TTGIR's is min_loop" in capsys.readouterr().err
    moved = tmp_path / "moved.csv"  # the right function name, another source file
    moved.write_text(_export_text("min_loop_100").replace("kernels.py", "elsewhere.py"))
    assert main([*args[:6], str(moved), "--arg", "K=100"]) == 2
    assert "none of the kernel's" in capsys.readouterr().err
