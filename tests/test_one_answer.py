"""One access, one answer (issue 56), held as the package's shape: only the engine floor and
``models/`` count or prove an access; nothing above the API reads spec files; the CLI takes nothing
from the engine floor; the kernel wing writes no spec-format dict; and every command's JSON gives
one access's answer under the same keys. Each rule has its twin that sees a violation."""

from __future__ import annotations

import ast
import json

import pytest
from bankproof.verifier.results import KEYS, AccessAnswer

from tests.test_package import FOLDERS, ROOT, _layer, _module_file, all_modules, import_graph

# The counting and lemma functions: what turns an access (or a table of its addresses) into
# wavefronts, or proves its count; by module, the names that do (``None``: every name).
COUNTING = {
    "bankproof.models.hardware": {"evaluate", "wavefront_counts", "phase_ids"},
    "bankproof.models.target": {"count", "count_rows", "build"},
    "bankproof.models.target_single": {"instruction_cases"},
    "bankproof.models.lds": {"algebra", "evaluate"},
    "bankproof.models.tally": None,
    "bankproof.models.lemmas": {"lemma_9_4", "lemma_9_5"},
    "bankproof.models.atomic_rule": {"atomic_wavefronts", "pair"},
    "bankproof.models.copy_rule": {"ldgsts_wavefronts"},
    "bankproof.models.access_linear": {"linear_access"},
}
# gpu_checks sits below the engines (it may not import them) and states the model's count beside
# each measurement so the GPU can judge it: the one floor besides these that evaluates the model
ALLOWED = ("bankproof.models", "bankproof.verifier.engine", "bankproof.gpu_checks")


def counting_calls(source: str) -> list[str]:
    """The calls of ``source`` to a counting or lemma function (by module alias or imported name)."""
    tree = ast.parse(source)
    modules: dict[str, str] = {}  # local name -> module
    names: dict[str, str] = {}  # local name -> module.function
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                if full in COUNTING:
                    modules[a.asname or a.name] = full
                elif node.module in COUNTING:
                    names[a.asname or a.name] = full
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name in COUNTING:
                    modules[a.asname or a.name] = a.name
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in modules:
            mod = modules[f.value.id]
            if COUNTING[mod] is None or f.attr in COUNTING[mod]:
                found.append(f"{mod}.{f.attr} (line {node.lineno})")
        elif isinstance(f, ast.Name) and f.id in names:
            mod, _, fn = names[f.id].rpartition(".")
            if COUNTING[mod] is None or fn in COUNTING[mod]:
                found.append(f"{names[f.id]} (line {node.lineno})")
    return found


def test_only_the_engine_floor_and_models_count_or_prove():
    bad = []
    for name in all_modules():
        if name.startswith(ALLOWED):
            continue
        bad += [f"{name}: {c}" for c in counting_calls(_module_file(name).read_text(encoding="utf-8"))]
    assert not bad, "\n".join(bad)


def test_the_counting_test_sees_a_reader_that_counts():
    assert counting_calls("from bankproof.models import target\nc = target.count(arch, a)\n") == [
        "bankproof.models.target.count (line 2)"
    ]
    assert counting_calls("from bankproof.models.lemmas import lemma_9_4 as l\nl(m, d, 32, 'load', 0)\n") == [
        "bankproof.models.lemmas.lemma_9_4 (line 2)"
    ]
    assert counting_calls("from bankproof.models import tally\ntally.streamed(arch, a)\n")
    assert not counting_calls("from bankproof.models import target\ntarget.get('sm90')\n")


# --- the input edge ---------------------------------------------------------------------------------
READER = "bankproof.verifier.api.spec_file"
ABOVE_API = ("render", "web", "agents", "cli", "package")


def input_edge_violations(graph: dict[str, set[str]]) -> list[str]:
    """Modules above the API that import the spec reader, and CLI modules that import the engine floor."""
    from tests.test_package import FLOORS

    bad = []
    for mod, targets in graph.items():
        floor = FLOORS[_layer(mod)][0]
        if floor in ABOVE_API and READER in targets:
            bad.append(f"{mod} ({floor}) imports the spec reader")
        if floor == "cli":
            bad += [
                f"{mod} imports {t} (the engine floor)"
                for t in targets
                if t.startswith("bankproof.verifier.engine")
            ]
    return sorted(bad)


@pytest.mark.slow
def test_input_is_read_at_the_api_and_the_cli_passes_paths():
    assert not input_edge_violations(import_graph())


@pytest.mark.slow
def test_the_input_edge_test_sees_a_violation():
    graph = import_graph()
    graph["bankproof.verifier.cli.commands"] |= {READER, "bankproof.verifier.engine.scope"}
    graph["bankproof.verifier.web.server"] |= {READER}
    assert input_edge_violations(graph) == [
        "bankproof.verifier.cli.commands (cli) imports the spec reader",
        "bankproof.verifier.cli.commands imports bankproof.verifier.engine.scope (the engine floor)",
        "bankproof.verifier.web.server (web) imports the spec reader",
    ]


def test_no_file_reader_in_the_engine_floor():
    """The engine floor takes records: no module of it reads TOML or a spec file."""
    bad = []
    for path in (ROOT / "verifier" / "engine").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) and any(a.name in ("tomllib", "tomli") for a in node.names):
                bad.append(path.name)
    assert not bad


# --- the kernel wing --------------------------------------------------------------------------------
SPEC_KEYS = {"shape", "dtype", "memory", "access"}


def spec_dicts(source: str) -> list[str]:
    """Dict literals of ``source`` written in the spec file's format (its top-level keys), and calls
    of the spec reader."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            if len(keys & SPEC_KEYS) >= 3:
                found.append(f"a spec dict (line {node.lineno})")
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in ("parse_spec", "load_spec", "spec_from_text"):
                found.append(f"{name} (line {node.lineno})")
    return found


def test_the_kernel_wing_writes_no_spec_dict():
    bad = []
    for folder in ("kernel", "ptx"):
        for path in sorted((ROOT / "verifier" / folder).glob("*.py")):
            bad += [f"{path.name}: {x}" for x in spec_dicts(path.read_text(encoding="utf-8"))]
    assert not bad, "\n".join(bad)


def test_the_spec_dict_test_sees_one():
    src = 'spec = {"shape": [32], "dtype": "f32", "memory": {}, "access": []}\nr = verify(parse_spec(spec))\n'
    assert spec_dicts(src) == ["a spec dict (line 1)", "parse_spec (line 2)"]


# --- one vocabulary ---------------------------------------------------------------------------------
OLD = {"ideal_wavefronts", "max_wavefronts_per_instruction", "hardware_model", "hardware", "hardware_rule",
       "counterexample", "status"}  # fmt: skip


def test_the_answer_has_every_key_always():
    assert tuple(AccessAnswer.unknown("x").to_dict()) == KEYS
    assert not OLD & set(KEYS)


def access_keys(data: object) -> list[set[str]]:
    """The key sets of every object in ``data`` that holds an access's answer (it has ``wavefronts``
    and ``ideal`` beside ``verdict``)."""
    out = []
    if isinstance(data, dict):
        if {"wavefronts", "ideal", "verdict", "instr"} <= set(data):
            out.append(set(data))
        for v in data.values():
            out += access_keys(v)
    elif isinstance(data, list):
        for v in data:
            out += access_keys(v)
    return out


def _run(capsys, argv: list[str]) -> dict:
    from bankproof.verifier.cli.main import main

    main(argv)
    return json.loads(capsys.readouterr().out)


CUDA = ROOT / "examples" / "cuda" / "transpose.cu"


def _commands() -> dict[str, list[str]]:
    seed = str(ROOT / "examples" / "transpose_16x32_xor_m.toml")
    return {
        "verify": ["verify", seed, "--json"],
        "synth": ["synth", seed, "--json"],
        "triton scan": ["triton", "scan", str(ROOT / "verifier" / "triton" / "sample.ttgir"), "--json"],
        "kernel": ["kernel", str(CUDA), "--kernel", "transpose_naive_tile", "--block", "32,8", "--arg", "n=1024", "--json"],
    }  # fmt: skip


@pytest.mark.compile
def test_every_command_gives_one_access_under_the_same_keys(capsys):
    """verify, synth, triton scan and kernel (and, below, the workbench and MCP): every access
    record holds every answer key, none of the old ones, the answer's keys under one meaning."""
    seen = {}
    for name, argv in _commands().items():
        found = access_keys(_run(capsys, argv))
        assert found, name
        for keys in found:
            assert set(KEYS) <= keys, (name, set(KEYS) - keys)
            assert not OLD & keys, (name, OLD & keys)
        seen[name] = found[0] & set(KEYS)
    assert len({frozenset(v) for v in seen.values()}) == 1


def test_the_workbench_and_mcp_give_the_same_keys():
    from bankproof.verifier.agents import mcp_server
    from bankproof.verifier.web.workbench import SEED, evaluate

    page = evaluate(SEED)
    for a in page["accesses"]:
        assert set(KEYS) <= set(a) and not OLD & set(a)
    spec = (ROOT / "examples" / "transpose_16x32_xor_m.toml").read_text()
    got = mcp_server.TOOLS["verify"](spec)
    for keys in access_keys(got):
        assert set(KEYS) <= keys and not OLD & keys


def test_the_keys_test_sees_an_old_key():
    old = {**AccessAnswer.unknown("x").to_dict(), "ideal_wavefronts": 4}
    (keys,) = access_keys({"accesses": [old]})
    assert OLD & keys == {"ideal_wavefronts"}


def test_folders_are_the_packages():
    assert FOLDERS == ("models", "proofs", "gpu_checks", "verifier")


# --- the engines a flag away -------------------------------------------------------------------------
def test_the_scan_answers_each_access_by_every_engine_when_asked():
    import bankproof

    sample = (ROOT / "verifier" / "triton" / "sample.ttgir").read_text()
    counted = bankproof.scan_ttgir(sample, path="s.ttgir").reports[0].buffers[0].accesses
    proved = bankproof.scan_ttgir(sample, path="s.ttgir", engines="all").reports[0].buffers[0].accesses
    assert [a.wavefronts for a in counted] == [a.wavefronts for a in proved] == [16, 256]
    assert [a.engines for a in counted] == [{}, {}] and [a.proof.seconds for a in counted] == [None, None]
    assert [sorted(a.engines) for a in proved] == [["algebra", "enumeration", "z3"]] * 2
    assert [(a.verdict, a.proof.engine) for a in proved] == [("proved", "z3"), ("refuted", "z3")]
    assert proved[1].conflict.lanes == counted[1].conflict.lanes
    with pytest.raises(bankproof.InputError, match="engines"):
        bankproof.scan_ttgir(sample, engines="magic")


@pytest.mark.compile
def test_the_kernel_engines_flag_keeps_the_count(capsys):
    argv = _commands()["kernel"]
    every = _run(capsys, argv)
    alone = _run(capsys, [*argv, "--engine", "enum"])
    assert [i["wavefronts"] for i in every["instructions"]] == [
        i["wavefronts"] for i in alone["instructions"]
    ]
    assert all(i["engines"] == {} and i["proof"]["engine"] == "enumeration" for i in alone["instructions"])
    assert any(set(i["engines"]) == {"enumeration", "algebra", "z3"} for i in every["instructions"])
