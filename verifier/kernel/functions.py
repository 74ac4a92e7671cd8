"""Device functions that are called, not inlined: each ``.func`` a kernel calls (transitively) has its
body appended to the kernel's, in a scope of its own (its registers are its own), its labels and
instruction indices continuing the kernel's; the PTX machine follows ``call`` and ``ret`` through
them with a return stack per thread, passing arguments and results through the ``.param`` space.

>>> from bankproof.verifier.ptx.module import read_module, kernel_code
>>> m = read_module('''
... .func (.param .b32 func_retval0) f(.param .b32 f_param_0)
... {
...   ld.param.u32 %r1, [f_param_0];
...   st.param.b32 [func_retval0+0], %r1;
...   ret;
... }
... .visible .entry k()
... {
...   call.uni (retval0), f, (param0);
... }''')
>>> code = with_functions(m, kernel_code(m, "k"))
>>> f = code.functions["f"]
>>> f.entry, f.params, f.returns, len(code.body)
(1, ('f_param_0',), ('func_retval0',), 4)
"""

from __future__ import annotations

import dataclasses
import re
from types import MappingProxyType

import numpy as np
from bankproof.verifier.ptx.module import Function, KernelCode, PtxModule, callee, read_body

MAX_FUNCTIONS = 64  # distinct .funcs appended to one kernel


def with_functions(module: PtxModule, code: KernelCode) -> KernelCode:
    """``code`` with the body of every ``.func`` it calls (transitively) appended, each in a scope
    of its own (its registers are its own) and its labels and instruction indices continuing the
    kernel's; functions the module does not define stay calls that are not followed."""
    body, labels, tables = list(code.body), dict(code.labels), dict(code.tables)
    local, funcs = set(code.local), {}
    todo = sorted(code.calls)
    scope = 1 << 20  # far above any brace block's id
    while todo and len(funcs) < MAX_FUNCTIONS:
        name = todo.pop(0)
        if name in funcs or name not in module.functions or name in module.entries:
            continue
        a, b = module.functions[name]
        text = module.text[a:b]
        head, _, rest = text.partition("{")
        groups = re.findall(r"\(([^()]*)\)", head)
        has_returns = bool(re.search(r"\.func\s*\(", head))  # .func (.param .b32 retval) name(...)
        rets = (
            [p.split()[-1] for p in groups[0].split(",") if ".param" in p] if has_returns and groups else []
        )
        args = (
            groups[1]
            if has_returns and len(groups) > 1
            else (groups[0] if groups and not has_returns else "")
        )
        params = [p.split()[-1] for p in args.split(",") if ".param" in p]
        start = module.text.count("\n", 0, a + len(head) + 1) + 1
        ops, lab, tab, _, regs = read_body(rest[: rest.rfind("}")], start, module.files, scope, len(body))
        funcs[name] = Function(name, len(body), tuple(params), tuple(rets), scope)
        body += ops
        labels.update({k: v for k, v in lab.items() if k not in labels})
        tables.update(tab)
        local |= regs
        local |= {
            (scope, r) for o in ops for r in re.findall(r"%[\w$]+", " ".join(o.operands)) if o.scope == scope
        }
        todo += sorted({callee(o) for o in ops if o.base == "call"} - set(funcs))
        scope += 1 << 20
    return dataclasses.replace(code, body=tuple(body), labels=MappingProxyType(labels),
                               tables=MappingProxyType(tables), local=frozenset(local),
                               functions=MappingProxyType(funcs))  # fmt: skip


MAX_DEPTH = 16  # nested calls a thread may be in
_SLOT = re.compile(r"\[\s*([\w$]+)\s*(?:\+\s*(\d{1,6}))?\s*\]")


class CallState:
    """Per thread: the return stack of the calls it is in; and the ``.param`` space (name+offset ->
    a register's value) through which arguments and results pass."""

    def __init__(self, n: int):
        self.stack = np.zeros((n, MAX_DEPTH), dtype=np.int64)
        self.depth = np.zeros(n, dtype=np.int64)
        self.space: dict = {}


def _slot(text: str) -> str | None:
    m = _SLOT.fullmatch(text.strip())
    return None if m is None else f"{m.group(1)}+{int(m.group(2) or 0)}"


def store_param(machine, op, on: np.ndarray) -> None:
    """``st.param [slot], v``: the threads of ``on`` put ``v`` in the slot."""
    slot = _slot(op.operands[0]) if len(op.operands) == 2 else None
    if slot is None:
        return
    value = machine.value(op.operands[1], op)
    old = machine.calls.space.get(slot)
    machine.calls.space[slot] = value if old is None else old.merge(value, on)


def load_param(machine, op):
    """``ld.param r, [slot]`` of a slot a caller or callee stored (else ``None``: a kernel parameter)."""
    slot = _slot(op.operands[1]) if len(op.operands) == 2 else None
    return None if slot is None else machine.calls.space.get(slot)


def call(machine, op, on: np.ndarray, pc: int) -> bool:
    """``call (rets), f, (args)`` of a function appended to the kernel: the threads of ``on`` bind
    ``f``'s parameters to the arguments, push their return address and jump to ``f``; ``False`` when
    ``f`` is not one (not followed)."""
    name = callee(op)
    f = machine.code.functions.get(name)
    if f is None:
        return False
    if (on & (machine.calls.depth >= MAX_DEPTH - 1)).any():
        machine.lost[pc] = f"calls nested deeper than {MAX_DEPTH - 1} (recursion) are not followed"
        machine.done |= on
        return True
    args = _names(op.operands[-1]) if op.operands and op.operands[-1].startswith("(") else []
    for param, arg in zip(f.params, args):
        for slot, value in list(machine.calls.space.items()):
            if slot.startswith(arg + "+"):
                machine.calls.space[param + slot[len(arg) :]] = value
    t = np.flatnonzero(on)
    depth = int(machine.calls.depth[t].max()) if t.size else 0
    machine.calls.stack[t, machine.calls.depth[t]] = pc + 1
    machine.calls.depth[t] += 1
    machine.pc[on] = f.entry
    # the callers run the function to its return before anything else runs: threads that called
    # from another site (another way of a divergent branch) run their own call when they get there,
    # as the hardware runs a branch's ways in turn
    machine.loop(on.copy(), depth)
    return True


def ret(machine, on: np.ndarray) -> np.ndarray:
    """``ret``: the threads of ``on`` inside a call return (their results copied to the caller's
    slots); returns those at the kernel's top level (they are done)."""
    inside = on & (machine.calls.depth > 0)
    for back in sorted(set(machine.calls.stack[inside, machine.calls.depth[inside] - 1].tolist())):
        who = inside & (
            machine.calls.stack[np.arange(len(on)), np.maximum(machine.calls.depth - 1, 0)] == back
        )
        site = machine.code.body[back - 1]
        f = machine.code.functions.get(callee(site))
        rets = _names(site.operands[0]) if site.operands and site.operands[0].startswith("(") else []
        for out, mine in zip(rets, f.returns if f else ()):
            for slot, value in list(machine.calls.space.items()):
                if slot.startswith(mine + "+"):
                    key = out + slot[len(mine) :]
                    old = machine.calls.space.get(key)
                    machine.calls.space[key] = value if old is None else old.merge(value, who)
        machine.pc[who] = back
        machine.calls.depth[who] -= 1
    return on & ~inside


def _names(group: str) -> list[str]:
    return [x.strip() for x in group.strip().strip("()").split(",") if x.strip()]
