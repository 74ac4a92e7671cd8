"""CUDA source for single-instruction probes: one kernel per instruction kind, launched with one
warp; each lane reads its byte offset from global memory, issues exactly one shared-memory
instruction (``asm volatile`` with ``.volatile`` so nothing is merged or hoisted) when its bit of
``mask`` is set, and sinks what it read to global memory.

>>> "ld.volatile.shared.v4.b32" in kernel_source(), kernel_name(instruction("ld128"))
(True, 'k_ld128')
"""

from __future__ import annotations

from bankproof.models.hardware import Instr, all_instructions, instruction

SMEM_BYTES = 49152  # the static shared-memory limit per block

_HEADER = f"""
__device__ __forceinline__ unsigned smem_base(const void* p) {{
  unsigned r;
  asm volatile("{{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }}" : "=r"(r) : "l"(p));
  return r;
}}
#define PROLOGUE \\
  __shared__ __align__(1024) unsigned char smem[{SMEM_BYTES}]; \\
  const unsigned lane = threadIdx.x & 31; \\
  const unsigned addr = smem_base(smem) + (unsigned)offs[lane]; \\
  const bool on = (mask >> lane) & 1u; \\
  unsigned r0 = 0, r1 = 0, r2 = 0, r3 = 0; \\
  (void)on; (void)r1; (void)r2; (void)r3;
"""


def kernel_name(ins: Instr) -> str:
    return "k_" + ins.short.replace(".", "_")


def _body(ins: Instr) -> str:
    w = ins.width
    if ins.op == "ld" and not ins.is_matrix:
        if w in (1, 2):
            t = "u8" if w == 1 else "u16"
            return (
                f'unsigned short h = 0; if (on) asm volatile("ld.volatile.shared.{t} %0, [%1];" '
                ': "=h"(h) : "r"(addr) : "memory"); r0 = h;'
            )
        if w == 4:
            return (
                'if (on) asm volatile("ld.volatile.shared.b32 %0, [%1];" : "=r"(r0) : "r"(addr) : "memory");'
            )
        if w == 8 and ins.variant == "b64":
            return (
                'unsigned long long d = 0; if (on) asm volatile("ld.volatile.shared.b64 %0, [%1];" '
                ': "=l"(d) : "r"(addr) : "memory"); r0 = (unsigned)d; r1 = (unsigned)(d >> 32);'
            )
        if w == 8:
            return (
                'if (on) asm volatile("ld.volatile.shared.v2.b32 {%0, %1}, [%2];" '
                ': "=r"(r0), "=r"(r1) : "r"(addr) : "memory");'
            )
        return (
            'if (on) asm volatile("ld.volatile.shared.v4.b32 {%0, %1, %2, %3}, [%4];" '
            ': "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr) : "memory");'
        )
    if ins.op == "st":
        if w in (1, 2):
            t = "u8" if w == 1 else "u16"
            return (
                f'unsigned short h = (unsigned short)lane; if (on) asm volatile("st.volatile.shared.{t} '
                '[%0], %1;" :: "r"(addr), "h"(h) : "memory");'
            )
        if w == 4:
            return (
                'if (on) asm volatile("st.volatile.shared.b32 [%0], %1;" :: "r"(addr), "r"(lane) : "memory");'
            )
        if w == 8 and ins.variant == "b64":
            return (
                'unsigned long long d = lane; if (on) asm volatile("st.volatile.shared.b64 [%0], %1;" '
                ':: "r"(addr), "l"(d) : "memory");'
            )
        if w == 8:
            return (
                'if (on) asm volatile("st.volatile.shared.v2.b32 [%0], {%1, %2};" '
                ':: "r"(addr), "r"(lane), "r"(lane) : "memory");'
            )
        return (
            'if (on) asm volatile("st.volatile.shared.v4.b32 [%0], {%1, %2, %3, %4};" '
            ':: "r"(addr), "r"(lane), "r"(lane), "r"(lane), "r"(lane) : "memory");'
        )
    m = ins.matrices
    regs = ", ".join(f"%{i}" for i in range(m))
    names = ["r0", "r1", "r2", "r3"][:m]
    t = ".trans" if ins.trans else ""
    if ins.op == "ldsm":
        outs = ", ".join(f'"=r"({n})' for n in names)
        return (
            f'asm volatile("ldmatrix.sync.aligned.m8n8.x{m}{t}.shared.b16 {{{regs}}}, [%{m}];" '
            f': {outs} : "r"(addr) : "memory");'
        )
    ins_ = ", ".join('"r"(lane)' for _ in names)
    regs1 = ", ".join(f"%{i + 1}" for i in range(m))
    return (
        f'asm volatile("stmatrix.sync.aligned.m8n8.x{m}{t}.shared.b16 [%0], {{{regs1}}};" '
        f':: "r"(addr), {ins_} : "memory");'
    )


def kernel_source(arch: int = 90) -> str:
    """All probe kernels for an architecture (stmatrix needs sm90)."""
    parts = [_HEADER]
    for ins in all_instructions():
        if ins.min_arch > arch:
            continue
        parts.append(
            f'extern "C" __global__ void {kernel_name(ins)}(const int* __restrict__ offs, unsigned mask, '
            f"unsigned* __restrict__ out) {{\n  PROLOGUE\n  {_body(ins)}\n"
            "  out[lane] = r0 ^ r1 ^ r2 ^ r3;\n}\n"
        )
    return "\n".join(parts)


__all__ = ["SMEM_BYTES", "kernel_name", "kernel_source", "instruction"]
