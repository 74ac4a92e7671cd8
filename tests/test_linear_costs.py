"""Every step after a kernel's run is at most linear in its instructions (issue 54): the dead-load
search is one backward pass (the same loads as the forward search it replaced, on random straight
and branching code), and a 60,000-load PTX with ``--time-limit 5`` answers within 10 s."""

from __future__ import annotations

import random
import re
import subprocess
import sys
import time

import pytest
from bankproof.verifier.kernel import ptxas
from bankproof.verifier.ptx.module import kernel_code, read_module


def _forward(code) -> set[int]:
    """The forward search (quadratic): for each load, the instructions after it until its fate."""
    starts = set(code.labels.values())
    out = set()
    for op in code.body:
        parts = op.opcode.split(".")
        if parts[0] not in ("ld", "ldmatrix") or "volatile" in parts or not op.operands:
            continue
        if not any(p.startswith("shared") for p in parts):
            continue
        dests = set(re.findall(r"%[\w$]+", op.operands[0]))
        if not dests:
            continue
        for later in code.body[op.index + 1 :]:
            if later.index in starts or later.base in ("bra", "brx", "call"):
                break
            first = later.operands[0] if later.operands else ""
            reads = " ".join(later.operands[1:]) + (" " + first if later.base in ptxas._WRITES_FIRST else "")
            if (
                later.guard is not None
                and later.guard[1] in dests
                or dests & set(re.findall(r"%[\w$]+", reads))
            ):
                break
            if later.base in ("ret", "exit") and later.guard is None:
                out.add(op.index)
                break
            if later.guard is None and later.base not in ptxas._WRITES_FIRST and later.operands:
                dests -= set(re.findall(r"%[\w$]+", later.operands[0]))
            if not dests:
                out.add(op.index)
                break
    return out


def _exits_forward(code) -> dict:
    """The forward search for loads ptxas moves after an early exit (registers matched whole)."""
    out = {}
    for op in code.body:
        parts = op.opcode.split(".")
        if parts[0] != "ld" or not any(p.startswith("shared") for p in parts) or not op.operands:
            continue
        dests = set(re.findall(r"%[\w$]+", op.operands[0]))
        guard = None
        for later in code.body[op.index + 1 :]:
            if later.base == "ret" and later.guard is None:
                break
            uses = bool(dests & set(re.findall(r"%[\w$]+", " ".join(later.operands[1:]))))
            if later.guard is not None:
                if guard is not None and later.guard != guard:
                    guard = None
                    break
                guard = later.guard
                continue
            if uses or later.base in ptxas._EFFECTS:
                guard = None
                break
        else:
            guard = None
        if guard is not None:
            out[op.index] = guard
    return out


def _scan_forward(code):
    """Merge runs and repeated loads, searching each open run's loads for the same offset."""
    starts = set(code.labels.values())
    out, again, open_ = [], [], {}

    def flush():
        for (base, width, _), items in open_.items():
            if len(items) > 1:
                items.sort(key=lambda t: t[1])
                out.append(
                    ptxas.Run(
                        tuple(i for i, _ in items), tuple(o for _, o in items), width, base.startswith("%")
                    )
                )
        open_.clear()

    for op in code.body:
        if op.index in starts:
            flush()
        ld = ptxas._load(op)
        if ld is not None:
            base, off, width = ld
            key = (base, width, op.guard)
            same = [i for i, o in open_.get(key, []) if o == off]
            if same:
                again.append(ptxas.Reuse(op.index, same[0]))
            else:
                open_.setdefault(key, []).append((op.index, off))
            continue
        if op.base in ptxas._STOP:
            flush()
            continue
        dest = op.operands[0] if op.operands else ""
        for key in [k for k in open_ if k[0] == dest]:
            items = open_.pop(key)
            if len(items) > 1:
                items.sort(key=lambda t: t[1])
                out.append(
                    ptxas.Run(
                        tuple(i for i, _ in items), tuple(o for _, o in items), key[1], key[0].startswith("%")
                    )
                )
    flush()
    return out, again


def _random_kernel(rng: random.Random) -> str:
    regs = [f"%r{i}" for i in range(1, 6)]
    lines = [
        ".visible .entry k()",
        "{",
        " .reg .b32 %r<9>;",
        " .reg .pred %p<3>;",
        " .shared .align 16 .b8 buf[256];",
    ]
    labels = 0
    for _ in range(rng.randrange(1, 25)):
        g = rng.choice(["", "", "", "@%p1 ", "@!%p1 "])
        r, s = rng.choice(regs), rng.choice(regs)
        kind = rng.randrange(10)
        if kind < 3:
            lines.append(f" {g}ld.shared.u32 {r}, [buf+{4 * rng.randrange(16)}];")
        elif kind == 3:
            lines.append(f" {g}ld.shared.v2.u32 {{{r}, {s}}}, [buf];")
            lines.append(f" {g}ld.shared.u32 {s}, [{r}+{4 * rng.randrange(4)}];")
        elif kind == 4:
            lines.append(f" {g}add.s32 {r}, {s}, 1;")
        elif kind == 5:
            lines.append(f" {g}st.shared.u32 [buf+8], {r};")
        elif kind == 6:
            lines.append(f" setp.eq.s32 %p1, {r}, 0;")
        elif kind == 7:
            labels += 1
            lines.append(f"$L{labels}:")
        elif kind == 8 and labels:
            lines.append(f" {g}bra $L{rng.randrange(1, labels + 1)};")
        else:
            lines.append(f" {g}ret;")
    lines += ["}"]
    return "\n".join(lines)


def test_the_backward_pass_finds_what_the_forward_search_found():
    rng = random.Random(11)
    found = 0
    for _ in range(2000):
        code = kernel_code(read_module(_random_kernel(rng)), None)
        want = _forward(code)
        assert ptxas.dead_loads(code) == want, "\n".join(
            f"{o.index}: {o.opcode} {o.operands}" for o in code.body
        )
        found += len(want)
    assert found > 300  # the cases hold dead loads, not only live ones


def test_the_other_passes_find_what_their_forward_searches_found():
    rng = random.Random(12)
    moved = runs = 0
    for _ in range(2000):
        code = kernel_code(read_module(_random_kernel(rng)), None)
        want = _exits_forward(code)
        assert ptxas.exits_before(code) == want
        assert ptxas.scan(code) == _scan_forward(code)
        moved += len(want)
        runs += len(ptxas.scan(code)[0])
    assert moved > 50 and runs > 50, (moved, runs)


def big_ptx(n: int) -> str:
    lines = [".visible .entry k()", "{", " .reg .b32 %r<70000>;", " .shared .align 4 .b8 buf[65536];",
             " mov.u32 %r1, %tid.x;", " shl.b32 %r2, %r1, 2;", " mov.u32 %r3, buf;", " add.s32 %r4, %r3, %r2;"]  # fmt: skip
    lines += [f" ld.shared.u32 %r{5 + i}, [%r4+{(i * 4) % 60000}];" for i in range(n)]
    lines += [f" st.shared.u32 [%r4], %r{5 + i};" for i in range(0, n, 7)]
    return "\n".join([*lines, " ret;", "}"]) + "\n"


@pytest.mark.slow
def test_sixty_thousand_loads_answer_within_the_time_limit(tmp_path):
    ptx = tmp_path / "big.ptx"
    ptx.write_text(big_ptx(60_000))
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "bankproof.verifier.cli.main", "kernel", str(ptx), "--block", "32", "--time-limit", "5"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    took = time.monotonic() - start
    assert done.returncode in (0, 1, 3), done.stderr
    assert took < 10, took


@pytest.mark.parametrize(
    "text, why",
    [
        ("#ttg.linear<{register = [" + ", ".join(["[0, 1]"] * 700_000) + "], lane = [[1, 0]], warp = [], block = []}>",
         "more than 20000 list items"),
        ("#ttg.linear<{register = [[" + ", ".join(["0"] * 1_500_000) + "]], lane = [], warp = [], block = []}>",
         "more than 20000 list items"),
        ("#ttg.linear<{register = [" + ", ".join(["[0, 1]"] * 6000) + "], lane = [[1, 0]], warp = [], block = []}>",
         "register has more than 32 bases"),
    ],
)  # fmt: skip
def test_a_huge_attribute_is_refused_before_it_is_read(text, why):
    from bankproof.models.errors import InputError
    from bankproof.models.notation import parse_layout

    start = time.monotonic()
    with pytest.raises(InputError, match=why):
        parse_layout(text, (32, 32))
    assert time.monotonic() - start < 2  # was 11 s for the 5.6 MB one
