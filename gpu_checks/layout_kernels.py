"""The CUDA source of whole-layout runs: each warp issues its store instructions,
``__syncthreads``, then its load instructions, writing what it loaded to global memory.

>>> from bankproof.models.hardware import instruction
>>> kernel_name(instruction("st32"), instruction("ldsm.x4"))
'k_layout_st32_ldsm_x4'
>>> "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in kernel_source(instruction("st32"), instruction("ldsm.x4"))
True
"""

from __future__ import annotations

from bankproof.gpu_checks.kernels import SMEM_BYTES
from bankproof.models.hardware import instruction


def _st(width: int) -> str:
    if width in (1, 2):
        t = "u8" if width == 1 else "u16"
        return (
            f'{{ unsigned short h = (unsigned short)v[0]; asm volatile("st.volatile.shared.{t} [%0], %1;" '
            f':: "r"(a), "h"(h) : "memory"); }}'
        )
    if width == 4:
        return 'asm volatile("st.volatile.shared.b32 [%0], %1;" :: "r"(a), "r"(v[0]) : "memory");'
    if width == 8:
        return (
            'asm volatile("st.volatile.shared.v2.b32 [%0], {%1, %2};" '
            ':: "r"(a), "r"(v[0]), "r"(v[1]) : "memory");'
        )
    return (
        'asm volatile("st.volatile.shared.v4.b32 [%0], {%1, %2, %3, %4};" :: "r"(a), "r"(v[0]), "r"(v[1]), '
        '"r"(v[2]), "r"(v[3]) : "memory");'
    )


def _ld(width: int) -> str:
    if width in (1, 2):
        t = "u8" if width == 1 else "u16"
        return (
            f'{{ unsigned short h; asm volatile("ld.volatile.shared.{t} %0, [%1];" : "=h"(h) : "r"(a) : "memory"); '
            f"r[0] = h; }}"
        )
    if width == 4:
        return 'asm volatile("ld.volatile.shared.b32 %0, [%1];" : "=r"(r[0]) : "r"(a) : "memory");'
    if width == 8:
        return (
            'asm volatile("ld.volatile.shared.v2.b32 {%0, %1}, [%2];" '
            ': "=r"(r[0]), "=r"(r[1]) : "r"(a) : "memory");'
        )
    return (
        'asm volatile("ld.volatile.shared.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), '
        '"=r"(r[3]) : "r"(a) : "memory");'
    )


def _stsm(ins) -> str:
    m, t = ins.matrices, ".trans" if ins.trans else ""
    regs = ", ".join(f"%{k + 1}" for k in range(m))
    vals = ", ".join(f'"r"(v[{k}])' for k in range(m))
    return f'asm volatile("stmatrix.sync.aligned.m8n8.x{m}{t}.shared.b16 [%0], {{{regs}}};" :: "r"(a), {vals} : "memory");'


def _ldsm(ins) -> str:
    m, t = ins.matrices, ".trans" if ins.trans else ""
    regs = ", ".join(f"%{k}" for k in range(m))
    outs = ", ".join(f'"=r"(r[{k}])' for k in range(m))
    return f'asm volatile("ldmatrix.sync.aligned.m8n8.x{m}{t}.shared.b16 {{{regs}}}, [%{m}];" : {outs} : "r"(a) : "memory");'


def kernel_name(st, ld) -> str:
    return f"k_layout_{st.short.replace('.', '_')}_{ld.short.replace('.', '_')}"


def _cp(ins) -> str:
    """A ``cp.async`` of the lane's ``st_val`` words (global memory) to ``a``; waited for below."""
    return (
        "{ unsigned long long g; "
        f'asm volatile("cvta.to.global.u64 %0, %1;" : "=l"(g) : "l"(st_val + (i * 32 + lane) * {ins.data_words})); '
        f'asm volatile("cp.async.{ins.variant}.shared.global [%0], [%1], {ins.width};" :: "r"(a), "l"(g) : "memory"); }}'
    )


def _codes(st, ld) -> tuple[str, str]:
    """The inline PTX of one store (value ``v``, address ``a``; a ``cp.async`` copies the same
    words from global memory) and one load (into ``r``)."""
    store = _stsm(st) if st.is_matrix else _cp(st) if st.is_copy else _st(st.width)
    return store, _ldsm(ld) if ld.is_matrix else _ld(ld.width)


def kernel_source(st, ld) -> str:
    """A store-then-load kernel for two instruction kinds."""
    sw, lw = st.data_words, ld.data_words
    st_code, ld_code = _codes(st, ld)
    return f"""
extern "C" __global__ void {kernel_name(st, ld)}(
    const unsigned* __restrict__ st_addr, const unsigned* __restrict__ st_val, const int* __restrict__ st_first,
    const unsigned* __restrict__ ld_addr, const int* __restrict__ ld_first, unsigned* __restrict__ out) {{
  __shared__ __align__(1024) unsigned char smem[{SMEM_BYTES}];
  unsigned base;
  asm volatile("{{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }}" : "=r"(base) : "l"(smem));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int i = st_first[warp]; i < st_first[warp + 1]; ++i) {{
    const unsigned a = base + st_addr[i * 32 + lane];
    unsigned v[{sw}];
    for (int k = 0; k < {sw}; ++k) v[k] = st_val[(i * 32 + lane) * {sw} + k];
    {st_code}
  }}
  {'asm volatile("cp.async.wait_all;" ::: "memory");' if st.is_copy else ""}
  __syncthreads();
  for (int i = ld_first[warp]; i < ld_first[warp + 1]; ++i) {{
    const unsigned a = base + ld_addr[i * 32 + lane];
    unsigned r[{lw}];
    {ld_code}
    for (int k = 0; k < {lw}; ++k) out[(i * 32 + lane) * {lw} + k] = r[k];
  }}
}}
"""


def case_kernel(case: dict) -> tuple[str, str, int]:
    """The kernel one planned case runs: (name, CUDA source, 32-bit words each lane loads)."""
    st, ld = instruction(case["store"]["instr"]), instruction(case["load"]["instr"])
    return kernel_name(st, ld), kernel_source(st, ld), ld.data_words


def _xor_terms(j: int, table: str) -> str:
    """The C expression XOR-ing ``table[k]`` for every set bit k of the constant ``j``."""
    terms = [f"{table}[{k}]" for k in range(j.bit_length()) if j >> k & 1]
    return " ^ ".join(terms) if terms else "0u"


def timed_kernel_source(st, ld, per_warp: tuple[int, int], smem_bytes: int) -> tuple[str, str]:
    """(name, CUDA source) of the timed round trip: every block stores its tile through shared
    memory and loads it back ``iters`` times. Addresses are linear in (instruction, lane, warp)
    bits, as the layouts make them: each is an XOR of table entries (:func:`bankproof.gpu_checks.
    layout_cases.address_table`), folded into constants by the unrolled loops, so the loop body is
    the shared-memory instructions and a few XORs, with no address loads.

    >>> from bankproof.models.hardware import instruction
    >>> name, src = timed_kernel_source(instruction("st32"), instruction("ld32"), (2, 2), 256)
    >>> name, "base + (st_lw ^ st_j[0])" in src
    ('k_timed_st32_ld32_2_2', True)
    """
    (nst, nld), sw, lw = per_warp, st.data_words, ld.data_words
    jst, jld = (nst - 1).bit_length(), (nld - 1).bit_length()
    name = f"k_timed_{st.short.replace('.', '_')}_{ld.short.replace('.', '_')}_{nst}_{nld}"
    st_code, ld_code = _codes(st, ld)
    st_body = "\n".join(
        f"    {{ const unsigned a = base + (st_lw ^ {_xor_terms(j, 'st_j')}); unsigned v[{sw}];"
        f" for (int k = 0; k < {sw}; ++k) v[k] = it ^ {j}u ^ k; {st_code} }}"
        for j in range(nst)
    )
    ld_body = "\n".join(
        f"    {{ const unsigned a = base + (ld_lw ^ {_xor_terms(j, 'ld_j')}); unsigned r[{lw}]; {ld_code}"
        f" for (int k = 0; k < {lw}; ++k) acc ^= r[k]; }}"
        for j in range(nld)
    )
    source = f"""
extern "C" __global__ void {name}(const unsigned* __restrict__ st_tbl, const unsigned* __restrict__ ld_tbl,
                                  unsigned* __restrict__ sink, int iters) {{
  __shared__ __align__(1024) unsigned char smem[{smem_bytes}];
  unsigned base;
  asm volatile("{{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }}" : "=r"(base) : "l"(smem));
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned st_lw = 0, ld_lw = 0;
  for (int b = 0; b < 5; ++b) if (lane >> b & 1) {{ st_lw ^= st_tbl[b]; ld_lw ^= ld_tbl[b]; }}
  for (int b = 0; b < 10; ++b) if (warp >> b & 1) {{ st_lw ^= st_tbl[5 + {jst} + b]; ld_lw ^= ld_tbl[5 + {jld} + b]; }}
  unsigned st_j[{max(1, jst)}], ld_j[{max(1, jld)}];
  for (int k = 0; k < {jst}; ++k) st_j[k] = st_tbl[5 + k];
  for (int k = 0; k < {jld}; ++k) ld_j[k] = ld_tbl[5 + k];
  unsigned acc = 0;
  for (int it = 0; it < iters; ++it) {{
{st_body}
    __syncthreads();
{ld_body}
    __syncthreads();
  }}
  sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}}
"""
    return name, source
