"""show and convert on AMD targets: the scope draws each published lane group over the arch's banks
(64 columns on gfx950), its cycle counts equal the count verify gives; convert plans 64-lane
shuffles (proved by Z3) and synthesizes its shared round trip over the lane groups."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from bankproof.models import target
from bankproof.verifier.api.spec_file import spec_from_text
from bankproof.verifier.cli.main import main

import bankproof as bp

ROOT = Path(__file__).resolve().parents[1]
BLOCKED = "#ttg.blocked<{{sizePerThread = [1, 1], threadsPerWarp = {t}, warpsPerCTA = [1, 1], order = {o}}}>"
UNSWIZZLED = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"


def _spec(arch: str, dtype: str, shape: list[int], memory: str | None, a: tuple, b: tuple) -> str:
    mem = f'[memory]\ntriton = "{memory}"\n' if memory else ""
    acc = "".join(
        f'[[access]]\nname = "{n}"\nkind = "{k}"\nlayout.triton = "{BLOCKED.format(t=t, o=o)}"\n'
        for n, k, t, o in (("rows", "store", *a), ("cols", "load", *b))
    )
    return f'shape = {shape}\ndtype = "{dtype}"\narch = "{arch}"\ndims = ["m", "k"]\n{mem}{acc}'


def _scope_cost(groups) -> list[int]:
    return [max(len(words) for words in banks.values()) for banks in groups]


def test_show_draws_gfx942_lane_groups_of_the_example():
    """MI300's ds_write_b128: 8 groups of 8 consecutive lanes, each conflict-free (one cycle)."""
    r = bp.show(spec=ROOT / "examples" / "amd_mi300_gemm_a_swizzled.toml")
    assert (r.instr, r.banks, r.model, len(r.groups)) == ("ds_write_b128", 32, "lane groups", 8)
    assert _scope_cost(r.groups) == [1] * 8
    lanes = [sorted({ln for ws in banks.values() for ls in ws.values() for ln in ls}) for banks in r.groups]
    assert lanes == [list(range(8 * g, 8 * g + 8)) for g in range(8)]


def test_show_on_gfx950_has_64_banks_and_counts_what_verify_counts():
    text = _spec("gfx950", "f32", [64, 64], UNSWIZZLED, ("[1, 64]", "[1, 0]"), ("[64, 1]", "[0, 1]"))
    spec = spec_from_text(text)
    r = bp.show(spec=spec, access="cols")
    assert (r.instr, r.banks) == ("ds_read_b128", 64)
    acc = spec.accesses[1]
    a = target.build("gfx950", acc.layout, spec.memory, spec.elem_bits, acc.kind, acc.instr)
    c = target.count("gfx950", a)
    assert sum(_scope_cost(r.groups)) == int(c.counts[r.instruction]) == 64  # 4 groups, 16 cycles each
    assert [sorted(g) for g in r.groups] == [[0, 1, 2, 3]] * 4  # each group reads a column: 4 banks


def test_show_cli_prints_lane_groups_and_cycles(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text(
        _spec("gfx950", "f32", [64, 64], UNSWIZZLED, ("[1, 64]", "[1, 0]"), ("[64, 1]", "[0, 1]"))
    )
    assert main(["show", str(path), "--access", "cols"]) == 0
    out = capsys.readouterr().out
    assert "4 lane group(s)" in out and "group 0: 16 cycle(s)" in out
    assert " 63" in out.splitlines()[2]  # the header runs over 64 banks


@pytest.mark.slow
def test_convert_plans_and_proves_a_64_lane_shuffle():
    """A 64x64 transpose inside one wave64: 64 rounds over 64 lanes, proved by Z3; the shared round
    trip synthesized over gfx950's lane groups is proved too."""
    text = _spec("gfx950", "f16", [64, 64], None, ("[8, 8]", "[1, 0]"), ("[8, 8]", "[0, 1]"))
    text = text.replace(
        "sizePerThread = [1, 1], threadsPerWarp = [8, 8], warpsPerCTA = [1, 1], order = [1, 0]",
        "sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [1, 1], order = [1, 0]",
    )
    text = text.replace(
        "sizePerThread = [1, 1], threadsPerWarp = [8, 8], warpsPerCTA = [1, 1], order = [0, 1]",
        "sizePerThread = [8, 1], threadsPerWarp = [8, 8], warpsPerCTA = [1, 1], order = [0, 1]",
    )
    r = bp.convert(spec=spec_from_text(text, require_memory=False))
    assert r.shuffle.possible and r.shuffle.proof.status == "proved"
    assert len(r.shuffle.rounds) == 64 and {len(x.src) for x in r.shuffle.rounds} == {64}
    assert max(max(x.src) for x in r.shuffle.rounds) == 63  # lanes above 31 are sources too
    assert r.shared_memory.memory == "the synthesized" and r.shared_memory.proof.status == "proved"
    assert r.verdict == "proved"


def test_convert_json_on_gfx942_example(capsys):
    assert main(["convert", str(ROOT / "examples" / "amd_mi300_gemm_a_swizzled.toml"), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["verdict"] == "proved" and d["shared_memory"]["memory"] == "the spec's"
    assert d["shuffle"]["possible"] is False  # the read spans 4 waves


def test_scope_groups_are_the_rules_groups():
    r = bp.show(spec=ROOT / "examples" / "amd_mi300_gemm_a_swizzled.toml", access="read")
    rule = target.rule("gfx942", "ds_read_b128")
    got = [sorted({ln for ws in banks.values() for ls in ws.values() for ln in ls}) for banks in r.groups]
    want = [sorted(np.flatnonzero(rule.groups == g).tolist()) for g in range(rule.ngroups)]
    assert sorted(got) == sorted(want)


def _gfx950_pinned_b64() -> str:
    text = (ROOT / "examples" / "amd_mi300_gemm_a_plain.toml").read_text().replace('"gfx942"', '"gfx950"')
    return text.replace('kind = "store"\n', 'kind = "store"\ninstr = "ds_write_b64"\n', 1)


def test_synth_builds_for_the_instruction_a_side_pins():
    """gfx950, writer pinned to ds_write_b64 (4 groups of 16 lanes): the construction follows that
    instruction's groups, not ds_write_b128's (unpublished, which once left the store 8-way: 512
    cycles); both sides reach their ideal, proved optimal over every layout with the pin."""
    r = bp.synth(spec=spec_from_text(_gfx950_pinned_b64()))
    assert [(a.instr, a.wavefronts, a.ideal) for a in r.accesses] == [
        ("ds_write_b64", 64, 64), ("ds_read_b64", 32, 32)]  # fmt: skip
    assert r.synth.universal_bound == 64  # 8 KiB / 256 B, twice: the pinned writer cannot reach it
    assert r.synth.optimal_over.startswith("every memory layout, with store's ds_write_b64 as the spec fixes")
    assert r.verdict == "proved"


def test_synth_free_sides_meet_the_byte_bound_on_gfx942(capsys):
    r = bp.synth(spec=ROOT / "examples" / "amd_mi300_gemm_a_plain.toml")
    assert sum(a.wavefronts for a in r.accesses) == r.synth.universal_bound == 128
    assert "(proved: bytes moved / 128 per cycle is met)" in r.synth.optimal_over


def test_synth_with_an_unpublished_free_side_is_unknown_not_optimal(capsys):
    """gfx950's ds_write_b128 has no published grouping: the free writer's count is unknown, so
    is the optimum (never a proof resting on it)."""
    path = ROOT / "examples" / "amd_mi300_gemm_a_plain.toml"
    text = path.read_text().replace('"gfx942"', '"gfx950"')
    r = bp.synth(spec=spec_from_text(text))
    assert r.accesses[0].wavefronts is None and r.synth.optimal_over.startswith("unknown")
    assert r.verdict == "unknown"


def test_explain_on_gfx950_sizes_banks_by_its_256_byte_rows(capsys):
    path = ROOT / "examples" / "amd_mi300_gemm_a_plain.toml"
    text = path.read_text().replace('"gfx942"', '"gfx950"')
    from bankproof.verifier.render.explain import to_text

    out = to_text(bp.explain(spec=spec_from_text(text)))
    assert "b = log2(256 / (2^v·w)) = log2(256/16) = 4 bank bits" in out
    out = to_text(bp.explain(spec=path))
    assert "b = log2(128 / (2^v·w)) = log2(128/16) = 3 bank bits" in out
