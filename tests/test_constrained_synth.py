"""Constrained synthesis (``[[engine]]`` in a synth spec): the cheapest layout every engine that
touches the buffer can take, proved by exhaustion over that family, beside the unconstrained
optimum and the engines that refuse it; an empty family names the engines that exclude each other."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from bankproof.models.notation import tma_layout
from bankproof.verifier.api.spec_file import load_spec, parse_spec
from bankproof.verifier.cli.main import main
from hypothesis import given, settings
from hypothesis import strategies as st

import bankproof

ROOT = Path(__file__).resolve().parent.parent
EPILOGUE = ROOT / "examples" / "synth" / "cutlass_sm90_epilogue_f32_tma.toml"
TRANSPOSE = ROOT / "examples" / "synth" / "transpose_32x32_f32_tma_load.toml"


def test_the_cutlass_f32_epilogue_has_a_tma_layout_without_its_conflict():
    """CUTLASS's SW128 atom costs the 64-bit stores 128 wavefronts (2-way); among the layouts a TMA
    box reads, two cost the ideal 64 (32-byte boxes, plain or SW32): the constrained optimum, proved
    by exhaustion, equal to the unconstrained one, which no TMA box reads."""
    r = bankproof.synth(spec=str(EPILOGUE))
    c = r.constrained
    assert c.engines == ("TMA store",) and c.proof.status == "proved" and c.refused == ()
    costs = {m.engines["TMA store"]: m.wavefronts for m in c.members}
    assert costs == {
        "none, 8 boxes of 16 bytes": 128, "none, 4 boxes of 32 bytes": 64, "none, 2 boxes of 64 bytes": 128,
        "none": 256, "32B, 4 boxes of 32 bytes": 64, "64B, 2 boxes of 64 bytes": 128, "128B": 128,
    }  # fmt: skip
    assert (c.optimal_wavefronts, c.unconstrained_wavefronts, c.cost) == (64, 64, 0)
    assert c.excluded_by == ("TMA store",)
    boxes = [m.costs["operations"] for m in c.members]  # TMA boxes per tile, in the same order
    assert boxes == [8, 4, 2, 1, 4, 2, 1] and [m.costs["xor_terms"] for m in c.members] == [
        0,
        0,
        0,
        0,
        1,
        2,
        3,
    ]
    assert all(m.instructions == {"r2s": "st64"} for m in c.members)  # the copy atom pins st64


@pytest.mark.slow
def test_a_constraint_that_costs_names_the_engine_that_refuses_the_optimum():
    r = bankproof.synth(spec=str(TRANSPOSE))
    c = r.constrained
    assert (c.optimal_wavefronts, c.unconstrained_wavefronts, c.cost) == (160, 64, 96)
    assert c.optimum.engines == {"TMA load": "128B"} and c.excluded_by == ("TMA load",)
    assert sum(a.wavefronts for a in r.accesses) == 64  # the unconstrained layout, verified
    # every member checked on its own: the swizzled modes' layouts through the tma: notation
    spec = load_spec(TRANSPOSE, require_memory=False)
    for m in c.members:
        label = m.engines["TMA load"].split(",")[0]
        if label == "none":
            continue
        lay, _ = tma_layout(label, spec.shape, spec.elem_bits)
        assert [list(b) for b in lay.in_bases("offset")] == [list(b) for b in m.offset]
        dims = spec.accesses[0].layout.out_dim_names
        mem = type(lay)((("offset", lay.in_bases("offset")),), tuple(zip(dims, spec.shape, strict=True)))
        accesses = [bankproof.Access(a.kind, a.layout, a.name, m.instructions[a.name]) for a in spec.accesses]
        again = bankproof.verify(mem, accesses=accesses, shape=spec.shape, dtype=spec.dtype)
        assert sum(a.wavefronts for a in again.accesses) == m.wavefronts, label
    assert c.optimal_wavefronts == min(m.wavefronts for m in c.members)  # undominated: the least


def _spec(engines: list[dict], dtype: str = "f16", shape=(64, 64)) -> dict:
    blocked = ("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], "
               "order = [1, 0]}>")  # fmt: skip
    return {"shape": list(shape), "dtype": dtype, "arch": "sm90",
            "access": [{"name": "st", "kind": "store", "layout": {"triton": blocked}}], "engine": engines}  # fmt: skip


@pytest.mark.slow
def test_engines_that_take_no_layout_in_common_are_named():
    c = bankproof.synth(spec=_spec([{"name": "box", "tma": "128B"}, {"name": "mma", "descriptor": "32B"}]))
    assert c.constrained.members == () and c.constrained.optimum is None
    assert c.constrained.empty == "box and mma take no layout in common"
    assert c.constrained.proof.status == "unknown"
    alone = bankproof.synth(
        spec=_spec([{"name": "mma", "descriptor": "any", "major": "MN"}], "f32", (64, 32))
    )
    assert alone.constrained.empty == "mma takes no layout of this f32 tile"
    assert all("MN-major needs 16-bit elements" in why for why in alone.constrained.refused)


def test_a_tma_box_and_its_wgmma_reads_share_their_modes():
    """A descriptor read takes the layout the TMA box of its mode writes (checked element by element):
    the family of both is the four modes, the optimum among them."""
    c = bankproof.synth(
        spec=_spec([{"name": "box", "tma": "any"}, {"name": "mma", "descriptor": "any"}])
    ).constrained
    assert [m.engines["mma"] for m in c.members] == ["none", "32B", "64B", "128B"]
    assert c.members[0].engines["box"] == "none, 8 boxes of 16 bytes"
    assert c.optimal_wavefronts == min(m.wavefronts for m in c.members) and c.proof.status == "proved"


@pytest.mark.slow
def test_the_cli_prints_and_exports_the_constrained_synthesis(capsys):
    assert main(["synth", str(TRANSPOSE)]) == 0
    out = capsys.readouterr().out
    assert (
        "constrained optimum: 160 wavefronts with TMA load 128B (proved by exhaustion over the 7 layouts)"
        in out
    )
    assert "unconstrained optimum: 64 wavefronts; TMA load cannot take it; the constraint costs 96" in out
    assert main(["synth", str(TRANSPOSE), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["constrained"]["cost"] == 96 and len(data["constrained"]["members"]) == 7


@pytest.mark.parametrize(
    ("engine", "message"),
    [
        ({"tma": "256B"}, 'spec: engine[0].tma must be "any" or modes of sm90'),
        ({"tma": "any", "major": "K"}, "spec: engine[0].major is K or MN, for a descriptor"),
        ({"descriptor": "any", "major": "X"}, "spec: engine[0].major is K or MN"),
        ({"tma": "any", "box": [8, 8]}, "spec: engine[0].box is not an engine field"),
        ({"name": "a"}, "spec: engine[0] needs exactly one of tma, descriptor"),
        ({"tma": [], "name": "a"}, "spec: engine[0].tma must be"),
    ],
)
def test_bad_engine_tables_are_refused_naming_the_field(engine, message, tmp_path):
    with pytest.raises(bankproof.InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_spec(_spec([engine]), require_memory=False)
    spec = tmp_path / "s.toml"
    spec.write_text(EPILOGUE.read_text() + "\n[[engine]]\ntma = 7\n")
    err = io.StringIO()
    assert main(["synth", str(spec)], io.StringIO(), err) == 2
    assert (
        err.getvalue().startswith("bankproof: spec: engine[1].tma must be")
        and "Traceback" not in err.getvalue()
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["name", "tma", "descriptor", "major", "box"]),
            st.one_of(
                st.sampled_from(["any", "none", "32B", "64B", "128B", "K", "MN", "x"]),
                st.integers(-2, 300),
                st.lists(st.sampled_from(["32B", "128B", "zz"]), max_size=3),
            ),  # fmt: skip
            max_size=4,
        ),
        min_size=1,
        max_size=3,
    ),
    st.sampled_from([(64, 64, "f16"), (32, 32, "f32"), (16, 128, "i8"), (8, 16, "f64")]),
)
def test_random_engine_tables_answer_or_name_the_field(engines, tile):
    """The fuzzer of the new spec field: any engine list is answered (the family enumerated, an
    empty one explained) or refused with an InputError naming it, never a crash."""
    rows, cols, dtype = tile
    try:
        r = bankproof.synth(spec=_spec(engines, dtype, (rows, cols)), engines="enum")
    except bankproof.InputError as e:
        assert str(e).startswith("spec: ") or str(e).startswith(("synth", "access")), str(e)
        return
    c = r.constrained
    assert (c.empty is None) == bool(c.members)
    if c.optimum is not None:
        assert c.optimal_wavefronts == min(m.wavefronts for m in c.members if m.wavefronts is not None)


MEASURED = ROOT / "gpu_checks" / "results" / "h200-2026-11-28-constrained.json"


SEEDS = ROOT / "examples" / "transpose_16x32_plain.toml"  # weighed against padded layouts


@pytest.mark.gpu_replay
@pytest.mark.parametrize("example", [EPILOGUE, TRANSPOSE, SEEDS], ids=lambda p: p.stem)
def test_every_layout_of_the_family_was_measured_as_counted(example):
    """On an H200 (``lab/gpu/device_constrained.sh``), every layout the engines take, the
    unconstrained optimum and CUTLASS's SW128 atom ran whole with every element right, and Nsight
    Compute's wavefronts equal what the constrained synthesis counts (the epilogue's row reader
    only checks the data)."""
    runs = {r["id"].rsplit("/", 1)[-1]: r for r in json.loads(MEASURED.read_text())["runs"]}
    r = bankproof.synth(spec=str(example), padded=example == SEEDS)
    c = r.constrained
    checker = example == EPILOGUE

    def cost(run: dict) -> int:
        assert run["data_mismatches"] == 0 and run["measured"] == run["predicted"]
        return run["measured"]["store"] + (0 if checker else run["measured"]["load"])

    for i, m in enumerate(c.members):
        run = runs[f"{example.stem}__member{i}.toml"]
        assert run["memory"]["offset"] == [list(b) for b in m.offset]  # the linear part, padding aside
        n = run["shape"][0] * run["shape"][1]  # the padding measured is the member's: its shared bytes
        span = n + sum((n - 1) // interval * pad for interval, pad in run["memory"].get("padded", []))
        assert span * run["elem_bits"] // 8 == m.costs["shared_bytes"], m.engines
        assert cost(run) == m.wavefronts, m.engines
    assert cost(runs[f"{example.stem}__unconstrained.toml"]) == c.unconstrained_wavefronts
    if checker:  # CUTLASS's choice, measured: the 2-way conflict the optimum removes
        assert cost(runs[f"{example.stem}__cutlass.toml"]) == 128 == 2 * c.optimal_wavefronts


BOX_AND_MMA = _spec([{"name": "box", "tma": "any"}, {"name": "mma", "descriptor": "any"}])


def _recount(spec: object, m) -> dict[str, int]:
    """A member's costs recomputed apart from the synthesis: its accesses verified on its layout
    (warp instructions and wavefronts), its XOR terms from the element offset of every coordinate
    bit of the tile (its TMA boxes are the label's: the epilogue test holds them)."""
    from bankproof.models.access import element_offsets
    from bankproof.models.layout import LinearLayout
    from bankproof.verifier.api.problem import problem

    p = problem(spec=spec, require_memory=False)
    dims = p.accesses[0].layout.out_dim_names
    mem = LinearLayout((("offset", tuple(map(tuple, m.offset))),), tuple(zip(dims, p.shape, strict=True)))
    accesses = [bankproof.Access(a.kind, a.layout, a.name, m.instructions[a.name]) for a in p.accesses]
    r = bankproof.verify(mem, accesses=accesses, shape=p.shape, dtype=p.dtype, arch=p.arch, engines="enum")
    offsets = element_offsets(mem)
    units = [(1 << b, 0) for b in range(p.shape[0].bit_length() - 1)]
    units += [(0, 1 << b) for b in range(p.shape[1].bit_length() - 1)]
    return {
        "wavefronts": sum(a.wavefronts for a in r.accesses),
        "instructions": sum(a.instructions for a in r.accesses),
        "xor_terms": sum(bin(int(offsets[u])).count("1") - 1 for u in units),
    }


@pytest.mark.parametrize(
    "spec", [str(EPILOGUE), str(TRANSPOSE), BOX_AND_MMA], ids=["epilogue", "transpose", "box+mma"]
)
def test_the_pareto_front_is_exactly_the_undominated_layouts(spec):
    """Every member's costs recomputed on their own, then every pair compared: the front is the
    members no other is at most as costly as in every cost and cheaper in one."""
    from bankproof.verifier.engine.constrained import COSTS

    c = bankproof.synth(spec=spec, engines="enum").constrained
    vec = []
    for m in c.members:
        again = _recount(spec, m)
        assert {k: again[k] for k in ("wavefronts", "instructions", "xor_terms")} == {
            k: m.costs[k] for k in ("wavefronts", "instructions", "xor_terms")
        }, m.engines
        vec.append(tuple(m.costs[k] for k in COSTS))

    def dominated(i: int) -> bool:
        return any(all(a <= b for a, b in zip(vec[j], vec[i])) and vec[j] != vec[i] for j in range(len(vec)))

    assert c.pareto == tuple(i for i in range(len(vec)) if not dominated(i))
    assert c.members.index(c.optimum) in c.pareto or any(
        vec[i][0] == c.optimal_wavefronts for i in c.pareto
    )  # the least wavefronts are on the front


@pytest.mark.slow
def test_weights_pick_the_front_layout_of_least_weighted_cost(capsys):
    c = bankproof.synth(spec=str(EPILOGUE), weights={"wavefronts": 1, "operations": 16}).constrained
    assert c.pareto == (1, 2, 3, 6) and c.members[c.chosen].engines == {
        "TMA store": "none, 4 boxes of 32 bytes"
    }
    one_box = bankproof.synth(spec=str(EPILOGUE), weights={"wavefronts": 1, "operations": 100}).constrained
    assert one_box.members[one_box.chosen].engines == {"TMA store": "128B"}  # 128 + 100 < 64 + 400
    for bad, why in (({"bogus": 1}, "weights names costs of"), ({"wavefronts": -1}, "wavefronts must be a number"),
                     ({}, "weights must map some of")):  # fmt: skip
        with pytest.raises(bankproof.InputError, match=why):
            bankproof.synth(spec=str(EPILOGUE), weights=bad)
    with pytest.raises(bankproof.InputError, match="the spec has none"):
        bankproof.synth(spec=str(ROOT / "examples" / "transpose_16x32_plain.toml"), weights={"wavefronts": 1})
    assert main(["synth", str(EPILOGUE), "--weights", "wavefronts=x"]) == 2
    assert "synth: --weights must be COST=NUMBER" in capsys.readouterr().err


@pytest.mark.slow
def test_padded_layouts_against_the_swizzle_trade_bytes_for_xors():
    """``padded=True``: the seeds' transpose's synthesized swizzle (32 wavefronts, 2 XOR terms, 2 KiB)
    against plain and padded layouts; 8 bytes of padding a row also reach 32 wavefronts with no XOR
    and 120 bytes more, both on the front, every padded member recounted through its CuTe form."""
    from bankproof.models.access import element_offsets
    from bankproof.models.notation import parse_layout

    path = ROOT / "examples" / "transpose_16x32_plain.toml"
    c = bankproof.synth(spec=str(path), padded=True).constrained
    by = {m.engines["padding"]: m for m in c.members}
    assert c.engines == ("padding",) and c.proof.status == "proved" and c.optimal_wavefronts == 32
    syn, pad8 = by["synthesized"], by["row-major + 8 bytes"]
    assert (syn.costs["wavefronts"], syn.costs["xor_terms"], syn.costs["shared_bytes"]) == (32, 2, 2048)
    assert (pad8.costs["wavefronts"], pad8.costs["xor_terms"], pad8.costs["shared_bytes"]) == (32, 0, 2168)
    index = {m.engines["padding"]: i for i, m in enumerate(c.members)}
    assert index["synthesized"] in c.pareto and index["row-major + 8 bytes"] in c.pareto
    spec = load_spec(path)
    for m in c.members:
        if m.engines["padding"] == "synthesized":
            continue
        mem = parse_layout(m.layout, spec.shape, dtype=spec.dtype).layout  # its CuTe strides, read back
        accesses = [bankproof.Access(a.kind, a.layout, a.name, m.instructions[a.name]) for a in spec.accesses]
        again = bankproof.verify(mem, accesses=accesses, shape=spec.shape, dtype=spec.dtype, engines="enum")
        assert sum(a.wavefronts for a in again.accesses) == m.wavefronts, m.engines
        assert (int(element_offsets(mem).max()) + 1) * 4 == m.costs["shared_bytes"], m.engines
    picked = bankproof.synth(
        spec=str(path), padded=True, weights={"wavefronts": 1, "xor_terms": 100}
    ).constrained
    assert picked.members[picked.chosen].engines == {"padding": "row-major + 8 bytes"}


def test_padded_on_an_amd_target_says_what_its_model_cannot():
    """On gfx942 (published lane groups) members whose instruction has no published grouping, or
    that would need sub-dword ds_write, are unknown with why: the optimum is then unknown too."""
    c = bankproof.synth(spec=str(ROOT / "examples" / "amd_mi300_gemm_a_plain.toml"), padded=True).constrained
    unknown = [m for m in c.members if m.verdict == "unknown"]
    assert unknown and all(m.reason for m in unknown) and c.proof.status == "unknown"
    assert any("no published lane grouping" in m.reason for m in unknown)
    assert any("sub-dword ds_write is not modeled" in m.reason for m in unknown)
    assert c.members[0].costs["wavefronts"] == 128 and 0 in c.pareto  # the synthesized layout, counted


def test_padded_needs_a_spec_without_engines():
    with pytest.raises(bankproof.InputError, match="synth: padded weighs layouts no engine takes"):
        bankproof.synth(spec=str(EPILOGUE), padded=True)
    with pytest.raises(bankproof.InputError, match="synth: padded must be True or False"):
        bankproof.synth(spec=str(ROOT / "examples" / "transpose_16x32_plain.toml"), padded="yes")


def test_an_access_the_model_has_no_rule_for_stays_untranslatable_through_verify():
    """A sub-dword ds_write on gfx942 has no model: verify refuses it as an ``Untranslatable``
    (an ``InputError``) naming the access, and constrained synthesis tells it from a refusal."""
    from bankproof.models.errors import Untranslatable

    rows = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [64, 1], warpsPerCTA = [1, 1], order = [0, 1]}>"
    with pytest.raises(
        Untranslatable, match=r"access\[0\] \(store\): instr .* sub-dword ds_write is not modeled"
    ):
        bankproof.verify("(64,64):(1,64)", store=rows, shape=(64, 64), dtype="f16", arch="gfx942")
