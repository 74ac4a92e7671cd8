"""One access naming a CuTe atom bankproof has no translation for (``SM61_DP4A``, a copy atom outside
its table) no longer refuses the whole spec: ``verify`` answers the other accesses exactly as it
answers them alone, names the one it could not read and why, and says ``unknown`` (exit 3) unless
another access is refuted. Every other command still refuses it (exit 2), naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from bankproof.models.errors import InputError
from bankproof.verifier import api
from bankproof.verifier.cli.main import main

from tests.test_verify import REPORT_SCHEMA

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
STORE = {"name": "g2s", "kind": "store",
         "layout": {"cute_copy": {"atom": "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "thr": "(32,4):(4,1)",
                                  "val": "(1,8)"}}}  # fmt: skip
LOAD = {"name": "s2r", "kind": "load",
        "layout": {"cute_mma": {"atom": "SM80_16x8x16_F16F16F16F16_TN", "operand": "A", "warps": "(2,2,1)",
                                "copy": "SM75_U32x4_LDSM_N"}}}  # fmt: skip
MEMORY = {"cute": "tile_to_shape(composition(Swizzle<3,3,3>{}, Layout<Shape<_8,_32>,Stride<_32,_1>>{}), "
                  "make_shape(Int<128>{}, Int<32>{}))"}  # fmt: skip


def spec(*accesses: dict, memory: dict = MEMORY) -> dict:
    return {"shape": [128, 32], "dtype": "f16", "arch": "sm80", "dims": ["m", "k"], "memory": memory,
            "access": list(accesses)}  # fmt: skip


def unknown_mma(name: str = "dp4a") -> dict:
    return {**LOAD, "name": name, "layout": {"cute_mma": {**LOAD["layout"]["cute_mma"], "atom": "SM61_DP4A"}}}


def unknown_copy(name: str = "s2r_copy") -> dict:
    return {**LOAD, "name": name, "layout": {"cute_copy": {"atom": "SM75_U32x1_MOVM_T", "thr": "(32,4):(4,1)",
                                                           "val": "(1,8)"}}}  # fmt: skip


def test_the_other_accesses_are_answered_as_alone_and_the_unknown_one_named():
    alone = api.verify(spec=spec(STORE, LOAD))
    both = api.verify(spec=spec(STORE, unknown_mma(), LOAD, unknown_copy()))
    assert [_timeless(a.to_dict()) for a in both.accesses] == [_timeless(a.to_dict()) for a in alone.accesses]
    assert alone.verdict == "proved" and both.verdict == "unknown" and both.exit_code == 3
    assert [(u.name, u.kind) for u in both.unread] == [("dp4a", "load"), ("s2r_copy", "load")]
    assert "access[1].layout.cute_mma" in both.unread[0].reason and "got SM61_DP4A" in both.unread[0].reason
    assert "copy atom is a real CuTe atom, but not one bankproof has" in both.unread[1].reason
    assert alone.unread is None and "unread" not in alone.to_dict()


def test_a_refuted_access_still_refutes_the_spec():
    conflicting = {"cute": "(128,32):(32,1)"}  # no swizzle: ldmatrix rows of one column share banks
    r = api.verify(spec=spec(STORE, LOAD, unknown_mma(), memory=conflicting))
    assert r.verdict == "refuted" and r.exit_code == 1 and [u.name for u in r.unread] == ["dp4a"]


def test_every_access_unknown_is_unknown_with_no_answers(tmp_path, capsys):
    path = tmp_path / "spec.toml"
    path.write_text(_toml(spec(unknown_mma("a"), unknown_copy("b"))))
    assert main(["verify", str(path), "--json"]) == 3
    rep = json.loads(capsys.readouterr().out)
    jsonschema.validate(rep, REPORT_SCHEMA)
    assert rep["accesses"] == [] and [u["name"] for u in rep["unread"]] == ["a", "b"]
    assert main(["verify", str(path)]) == 3
    out = capsys.readouterr().out
    assert (
        "  a  load  not counted: spec: access[0].layout.cute_mma" in out
        and "verdict: unknown (exit 3)" in out
    )


@pytest.mark.parametrize("command", ["synth", "explain", "show", "convert"])
def test_other_commands_refuse_it_naming_the_field(command, tmp_path, capsys):
    path = tmp_path / "spec.toml"
    path.write_text(_toml(spec(STORE, unknown_mma())))
    assert main([command, str(path)]) == 2
    err = capsys.readouterr().err
    assert (
        "spec: access[1].layout.cute_mma: cute: mma atom is a real CuTe atom, but not one" in err
        and "Traceback" not in err
    )


def test_a_partial_spec_handed_to_synth_is_refused():
    from bankproof.verifier.api.spec_file import parse_spec

    partial = parse_spec(spec(STORE, LOAD, unknown_mma()), partial=True)
    assert [u.name for u in partial.unread] == ["dp4a"]
    with pytest.raises(InputError, match="access dp4a was not read"):
        api.synth(spec=partial)


def test_a_malformed_access_is_still_refused_by_verify():
    """Only a well-formed name outside the tables is answered in part; a malformed atom is an error."""
    bad = {**LOAD, "layout": {"cute_mma": {**LOAD["layout"]["cute_mma"], "operand": "D"}}}
    with pytest.raises(InputError, match="operand must be A, B or C"):
        api.verify(spec=spec(STORE, bad))


def _timeless(v: object) -> object:
    if isinstance(v, dict):
        return {k: _timeless(x) for k, x in v.items() if k != "seconds"}
    return [_timeless(x) for x in v] if isinstance(v, list) else v


def _toml(d: dict) -> str:
    def value(v: object) -> str:
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return json.dumps(v)

    lines = [f"{k} = {value(v)}" for k, v in d.items() if k not in ("memory", "access")]
    lines += ["[memory]", *(f"{k} = {value(v)}" for k, v in d["memory"].items())]
    for a in d["access"]:
        lines += ["[[access]]", *(f"{k} = {value(v)}" for k, v in a.items())]
    return "\n".join(lines) + "\n"
