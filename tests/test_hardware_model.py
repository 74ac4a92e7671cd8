"""The wavefront model's API: exact values, instruction names, status per arch, bad input."""

from __future__ import annotations

import json

import pytest
from bankproof.models.errors import InputError
from bankproof.models.hardware import instruction
from bankproof.models.target_single import wavefronts
from bankproof.verifier.cli.main import main

ROWS = [i * 128 for i in range(32)]  # every lane: bank 0, a different word


@pytest.mark.parametrize(
    ("name", "ptx"),
    [
        ("LDS.128", "ld.shared.v4.b32"),
        ("st64", "st.shared.v2.b32"),
        ("ld.shared.b64", "ld.shared.b64"),
        ("ld.volatile.shared.u8", "ld.shared.u8"),
        ("LDSM.16.MT88.4", "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"),
        ("stsm.x2", "stmatrix.sync.aligned.m8n8.x2.shared.b16"),
    ],
)
def test_instruction_names(name, ptx):
    assert instruction(name).name == ptx


@pytest.mark.parametrize(
    ("instr", "offsets", "count", "ideal"),
    [
        ("ld32", list(range(0, 128, 4)), 1, 1),
        ("ld32", ROWS, 32, 1),
        ("ld32", [0] * 32, 1, 1),  # broadcast of one word
        ("ld8", list(range(32)), 1, 1),  # 32 bytes in 8 words: served together
        ("ld64", [i * 8 for i in range(32)], 2, 2),
        ("ld128", [i * 16 for i in range(32)], 4, 4),
        ("st128", [0] * 32, 4, 4),  # stores keep their quarter-warp phases
        ("ld128", [0] * 32, 2, 2),  # paired loads: half-warp phases
        ("ld64", [(i // 2) * 128 for i in range(32)], 16, 1),  # lane^1 pairs: one 32-lane phase
        ("ld64", [(i % 16) * 128 for i in range(32)], 32, 2),  # lane^16 pairs do not merge
        ("ldsm.x4", [(i % 8) * 16 + (i // 8) * 128 for i in range(32)], 4, 4),
        ("ldsm.x1", [i * 16 for i in range(8)] * 4, 1, 1),
    ],
)
def test_exact_counts(instr, offsets, count, ideal):
    w = wavefronts(instr, offsets)
    assert (w.count, w.ideal, w.status) == (count, ideal, "measured")
    assert len(w.groups) == count


def test_active_mask_and_groups():
    w = wavefronts("ld32", ROWS, [i < 3 for i in range(32)])
    assert w.count == 3 and w.groups == ((0,), (1,), (2,)) and w.phases == ((0, 1, 2),)
    assert wavefronts("ld32", ROWS, [False] * 32).count == 0


def test_status_on_unmeasured_archs():
    assert wavefronts("ld32", ROWS, arch="sm80").status == "assumed"
    w = wavefronts("ld128", [0] * 32, arch="sm100")
    assert w.status == "unknown" and "sm90 only" in w.reason


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("ld128", [8] * 32),
            "wavefronts: byte_offsets must be 16-byte aligned for ld.shared.v4.b32 (lane 0), got 8",
        ),
        (("ld32", [0] * 31), "wavefronts: byte_offsets/active must have 32 entries each"),
        (("ld32", [-4] * 32), "wavefronts: byte_offsets must be non-negative"),
        (("ldsm.x4", [0] * 32, [True] * 31 + [False]), "wavefronts: active must be all lanes"),
        (("lds.256", [0] * 32), "instr: name is not a known shared-memory instruction"),
    ],
)
def test_bad_input(args, message):
    with pytest.raises(InputError) as e:
        wavefronts(*args)
    assert str(e.value).startswith(message)


def test_stmatrix_needs_sm90():
    with pytest.raises(InputError, match="needs sm90 or newer"):
        wavefronts("stsm.x4", [i * 16 for i in range(32)], arch="sm80")


def test_cli_jsonl(tmp_path, capsys):
    f = tmp_path / "cases.jsonl"
    f.write_text(
        json.dumps({"instr": "ld128", "byte_offsets": [i * 16 for i in range(32)]})
        + "\n\n"
        + json.dumps({"instr": "LDS", "byte_offsets": ROWS[:2] * 16, "active": [True, True] + [False] * 30})
        + "\n"
    )
    assert main(["wavefronts", "--input", str(f)]) == 0
    out = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert out[0]["wavefronts"] == 4 and out[0]["ideal"] == 4 and len(out[0]["groups"]) == 4
    assert out[1] == {"wavefronts": 2, "ideal": 1, "groups": [[0], [1]], "rests_on": "measured"}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            '{"instr": "ld32", "byte_offsets": [0]}',
            "line 1: byte_offsets must be a list of 32 integers, got 1",
        ),
        (
            '{"instr": "ld32", "byte_offsets": ' + json.dumps([0.5] * 32) + "}",
            "line 1: byte_offsets must be a list of 32",
        ),
        (
            '{"instr": "ld32", "byte_offsets": ' + json.dumps([0] * 32) + ', "active": [1]}',
            "line 1: active must be a list of 32 booleans",
        ),
        ('{"instr": "ld99", "byte_offsets": ' + json.dumps([0] * 32) + "}", "line 1: instr is not a known"),
        (
            '{"instr": "ld32", "byte_offsets": ' + json.dumps([0] * 32) + ', "x": 1}',
            "line 1: x is not a field",
        ),
        ("[1, 2]", "line 1: json must be an object"),
        ('{"instr": ', "line 1: json is not valid JSON"),
        (
            '{"instr": "ld128", "byte_offsets": ' + json.dumps([4] * 32) + "}",
            "line 1: byte_offsets must be 16-byte aligned",
        ),
    ],
)
def test_cli_bad_lines(tmp_path, capsys, line, message):
    f = tmp_path / "bad.jsonl"
    f.write_text(line + "\n")
    assert main(["wavefronts", "--input", str(f)]) == 2
    assert message in capsys.readouterr().err


def test_the_per_row_count_equals_the_grouped_count():
    """``evaluate`` without groups sorts each row alone; with groups it sorts all rows together:
    on random rows of every phase-model instruction (broadcast pairs, masked lanes) the counts
    and ideals are the same."""
    import numpy as np
    from bankproof.models.hardware import evaluate, instruction

    rng = np.random.default_rng(0)
    names = ["ld8", "ld16", "ld32", "ld64", "ld128", "st8", "st32", "st64", "st128", "ldsm.x1",
             "ldsm.x2.trans", "ldsm.x4", "stsm.x4"]  # fmt: skip
    for name in names:
        ins = instruction(name)
        width = 16 if ins.is_matrix else ins.width
        for t in range(60):
            offs = rng.integers(0, 4096 // width, size=(40, 32)) * width
            if t % 3 == 0:  # lane pairs on one address (the paired wide-load rule)
                offs = (np.arange(32) // 2 * width)[None].repeat(40, 0) + rng.integers(0, 4, (40, 1)) * 128
            act = np.ones((40, 32), bool) if ins.is_matrix or t % 2 == 0 else rng.random((40, 32)) > 0.3
            fast, grouped = evaluate(ins, offs, act), evaluate(ins, offs, act, groups=True)
            assert np.array_equal(fast[0], grouped[0]) and np.array_equal(fast[1], grouped[1]), (name, t)
