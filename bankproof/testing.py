"""Assertions for kernel authors' own test suites (pytest or unittest: they raise
``AssertionError``). A failure names the access, its wavefronts, the two lanes that collide and
the ``bankproof wavefronts`` line that replays the instruction.

>>> from bankproof.testing import assert_conflict_free, assert_wavefronts
>>> rows = ("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], "
...         "warpsPerCTA = [1, 1], order = [1, 0]}>")
>>> cols = {"register": [[0, 2], [0, 4], [0, 8], [0, 16]],
...         "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]]}
>>> r = assert_conflict_free("32*m + (n ^ (2*m))", store=rows, load=cols, shape=(16, 32), dtype="f32")
>>> r = assert_wavefronts({"store": 16, "load": 32}, "32*m + (n ^ m)", store=rows, load=cols,
...                       shape=(16, 32), dtype="f32")
>>> assert_conflict_free("32*m + (n ^ m)", store=rows, load=cols, shape=(16, 32), dtype="f32")
Traceback (most recent call last):
...
AssertionError: access 'load' (ld.shared.b32): 32 wavefronts, ideal 16: 2-way conflict [refuted by z3]
  lanes 1 and 16 of warp 0, instruction 0: bank 1, different words
    lane  1: (m=1, n=0) byte 132
    lane 16: (m=0, n=1) byte 4
  reproduce: echo '{"instr":"ld32","byte_offsets":[0,132,...]}' | bankproof wavefronts --input -
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bankproof.verifier import api
from bankproof.verifier.render.text import ptx_name
from bankproof.verifier.results import AccessResult, VerifyResult

__all__ = ["assert_conflict_free", "assert_kernel_conflict_free", "assert_wavefronts"]


def _describe(a: AccessResult) -> str:
    cost = f"{a.wavefronts} wavefronts" if a.wavefronts is not None else "? wavefronts"
    lines = [
        f"access {a.name!r} ({ptx_name(a.instr)}): {cost}, ideal {a.ideal}: {a.state} "
        f"[{a.proof.status} by {a.proof.engine}]" + (f" ({a.proof.reason})" if a.proof.reason else "")
    ]
    cx = a.conflict
    if cx is not None:
        l0, l1 = cx.lanes
        lines.append(
            f"  lanes {l0} and {l1} of warp {cx.warp}, instruction {cx.instruction}: bank {cx.bank}, "
            "different words"
        )
        for lane, coords, addr in zip(cx.lanes, cx.coords, cx.byte_addresses):
            where = ", ".join(f"{k}={v}" for k, v in coords.items())
            lines.append(f"    lane {lane:>2}: ({where}) byte {addr}")
        lines.append(f"  reproduce: {cx.reproduce}")
    if a.proof.status == "disagree":
        lines.append("  the engines disagree: " + ", ".join(f"{e} {r.verdict} {r.wavefronts}"
                                                           for e, r in a.engines.items()))  # fmt: skip
    return "\n".join(lines)


def _check(result: VerifyResult, access: str | None) -> list[AccessResult]:
    __tracebackhide__ = True
    if access is None:
        return list(result.accesses)
    try:
        return [result.access(access)]
    except KeyError:
        names = ", ".join(a.name for a in result.accesses)
        raise AssertionError(f"no access named {access!r} (the accesses are {names})") from None


def assert_conflict_free(*args: Any, access: str | None = None, **kwargs: Any) -> VerifyResult:
    """Assert that every access (or the one named ``access``) is proved conflict-free; the other
    arguments are :func:`bankproof.verify`'s. Returns the result."""
    __tracebackhide__ = True  # pytest shows the message, not this helper's source
    result = api.verify(*args, **kwargs)
    bad = [a for a in _check(result, access) if a.proof.status != "proved"]
    if bad:
        raise AssertionError("\n".join(_describe(a) for a in bad))
    return result


def assert_wavefronts(
    expected: int | Mapping[str, int], *args: Any, access: str | None = None, **kwargs: Any
) -> VerifyResult:
    """Assert each access's exact wavefront count: ``expected`` maps access names to counts, or
    is one count for ``access`` (or for the only access). Returns the result."""
    __tracebackhide__ = True  # pytest shows the message, not this helper's source
    result = api.verify(*args, **kwargs)
    if isinstance(expected, Mapping):
        want = dict(expected)
    else:
        chosen = _check(result, access)
        if len(chosen) != 1:
            raise AssertionError("one expected count needs access=... (the problem has several accesses)")
        want = {chosen[0].name: expected}
    wrong = []
    for name, count in want.items():
        (a,) = _check(result, name)
        if a.proof.status not in ("proved", "refuted") or a.wavefronts != count:
            wrong.append(f"expected {count} wavefronts, got:\n" + _describe(a))
    if wrong:
        raise AssertionError("\n".join(wrong))
    return result


def assert_kernel_conflict_free(source: Any, *, lines: Any = None, **kwargs: Any):
    """Assert that a kernel's shared-memory instructions (every one, or those at the source
    ``lines`` given) are proved conflict-free over one CTA of the launch; the other arguments are
    :func:`bankproof.kernel`'s. A failure names each line, its wavefronts, the two lanes that
    collide and the ``bankproof wavefronts`` line that replays the instruction. Returns the result.

    >>> ptx = '''
    ... .visible .entry k()
    ... {
    ...   .shared .align 4 .b8 buf[4096];
    ...   mov.u32 %r1, %tid.x;
    ...   shl.b32 %r2, %r1, 7;
    ...   mov.u32 %r3, buf;
    ...   add.s32 %r4, %r3, %r2;
    ...   ld.shared.u32 %r5, [%r4];
    ... }'''
    >>> assert_kernel_conflict_free(ptx, block=32)
    Traceback (most recent call last):
    ...
    AssertionError: <text>:? ld.shared.u32 (PTX line 9): 32 wavefronts, ideal 1 [refuted]
      warp 0, execution 0: lanes 0 and 1 (threads 0, 1) at bytes 0 and 128, bank 0
      reproduce: echo '{"instr":"ld32","byte_offsets":[0,128,...]}' | bankproof wavefronts --input -
    """
    __tracebackhide__ = True
    from bankproof.verifier.api.kernel import kernel

    result = kernel(source, **kwargs)
    want = None if lines is None else {int(x) for x in ([lines] if isinstance(lines, int) else lines)}
    bad = []
    for i in result.instructions:
        if want is not None and (i.location is None or i.location.line not in want):
            continue
        if i.verdict == "proved" or (i.verdict == "unknown" and i.rests_on == "not modelled"):
            continue
        where = f"{i.location.file}:{i.location.line}" if i.location else f"{result.source}:?"
        head = f"{where} {i.opcode} (PTX line {i.ptx_line}): "
        if i.conflict is None:
            bad.append(head + f"{i.verdict} ({i.reason or i.rests_on})")
            continue
        c = i.conflict
        line = c.reproduce
        if len(line) > 120:
            cut = line.index("[") + 1
            second = line.index(",", line.index(",", cut) + 1) + 1
            line = line[:second] + "...]}' | bankproof wavefronts --input -"
        bad.append(
            head + f"{i.wavefronts} wavefronts, ideal {i.ideal} [{i.verdict}]\n"
            f"  warp {c.warp}, execution {c.execution}: lanes {c.lanes[0]} and {c.lanes[1]} (threads "
            f"{c.threads[0]}, {c.threads[1]}) at bytes {c.byte_addresses[0]} and {c.byte_addresses[1]}, "
            f"bank {c.bank}\n"
            f"  reproduce: {line}"
        )
    if bad:
        raise AssertionError("\n".join(bad))
    return result
