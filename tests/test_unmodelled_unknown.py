"""Nothing unmodelled is left out of a verdict (issue 55, item 3): a shared atomic of a form no
probe measured (other types and operations, a CAS loop) makes its line and the kernel unknown, never proved; an
opcode outside the PTX instruction set makes the kernel unknown at its line; every opcode of the
repository's PTX (examples and recorded GPU runs) is in the instruction set's list."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bankproof.verifier.ptx.opcodes import PTX_OPCODES

import bankproof
from tests.records import record_strings

ROOT = Path(__file__).resolve().parents[1]
BODY = """.visible .entry k()
{{
 .shared .align 4 .b8 buf[4096];
 mov.u32 %r1, %tid.x;
 shl.b32 %r2, %r1, 2;
 mov.u32 %r3, buf;
 add.s32 %r4, %r3, %r2;
{extra}
 ld.shared.u32 %r5, [%r4];
 st.shared.u32 [%r4], %r5;
}}
"""


def test_a_shared_atomic_makes_the_kernel_unknown():
    """A form no probe measured (a signed add runs as ATOMS.ADD.S32; models/atomic_rule.py)."""
    r = bankproof.kernel(BODY.format(extra=" atom.shared.add.s32 %r8, [%r4], %r1;"), block=32, language="ptx")
    assert r.verdict == "unknown" and r.exit_code == 3
    (line,) = r.lines
    assert line.verdict == "unknown" and line.wavefronts is None
    assert bankproof.kernel(BODY.format(extra=""), block=32, language="ptx").verdict == "proved"


def test_an_opcode_outside_the_isa_makes_the_kernel_unknown_at_its_line():
    r = bankproof.kernel(BODY.format(extra=" frob.shared.u32 %r9, [%r4];"), block=32, language="ptx")
    assert r.verdict == "unknown" and r.exit_code == 3
    assert r.unknown == (
        "PTX line 8: frob.shared.u32 is not a PTX instruction bankproof knows (its effect is unknown)",
    )


def _ptx_texts() -> list[str]:
    texts = [p.read_text() for p in ROOT.rglob("*.ptx") if ".venv" not in p.parts]
    return texts + record_strings(lambda key, text: "ptx" in key.lower() and ".entry" in text)


def test_every_opcode_the_repositorys_ptx_uses_is_known():
    texts = _ptx_texts()
    seen: set[str] = set()
    for t in texts:
        for line in t.splitlines():
            s = re.sub(r"^@!?%\w+\s+", "", line.strip())
            m = re.match(r"([a-z][a-z0-9_]*)[.\s;]", s)
            if m and not s.startswith(".") and not re.match(r"[\w$]+:", s):
                seen.add(m.group(1))
    assert len(texts) > 50 and len(seen) > 35
    assert sorted(seen - PTX_OPCODES) == []


@pytest.mark.triton
@pytest.mark.compile
def test_every_opcode_of_the_built_in_triton_corpus_is_known(corpus_entries):
    """Triton 3.9's PTX for the built-in corpus (sm80, sm90, sm100): no opcode outside the list."""
    from bankproof.verifier.ptx.module import kernel_code, read_module
    from bankproof.verifier.ptx.opcodes import unknown_opcodes
    from bankproof.verifier.triton.corpus_configs import builtin_configs
    from bankproof.verifier.triton.jobs import compile_kernel

    configs = {c["name"]: c for c in builtin_configs()}
    checked = 0
    for e in corpus_entries:
        if not e.compiled or e.arch != "sm90":
            continue
        _, ptx = compile_kernel(configs[e.config], e.arch)
        code = kernel_code(read_module(ptx), None)
        assert unknown_opcodes(op.opcode for op in code.body) == [], e.name
        checked += 1
    assert checked > 50


@pytest.mark.parametrize(
    "extra, family",
    [
        (" ld.shared::cluster.u32 %r8, [%r4];", "dsmem"),
        (" st.bulk.weak.shared::cta [%r4], 64, 0;", "bulk"),
        (" cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd1], [%r4], 64;", "unclassified"),
    ],
)
def test_a_shared_access_no_rule_counts_makes_the_kernel_and_its_totals_unknown(extra, family):
    """Another CTA's shared memory, the bulk engine, a shared form no rule reads: the line and the
    kernel are unknown, and no load or store total is stated (where ncu counts them is not known)."""
    r = bankproof.kernel(BODY.format(extra=extra), block=32, language="ptx")
    assert r.verdict == "unknown" and r.exit_code == 3
    assert any(i.family == family and i.wavefronts is None for i in r.instructions)
    assert all(t.wavefronts is None for t in r.totals if t.kind in ("ld", "st"))


def test_a_generic_atomic_on_a_shared_address_makes_the_kernel_unknown():
    extra = " mov.u64 %rd1, buf;\n cvta.shared.u64 %rd2, %rd1;\n atom.add.u32 %r9, [%rd2], 1;"
    r = bankproof.kernel(BODY.format(extra=extra), block=32, language="ptx")
    assert r.verdict == "unknown" and any(i.instr == "atom.generic" for i in r.instructions)
