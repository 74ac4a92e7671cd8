import triton
import triton.language as tl


@triton.jit
def seg_colsum(x_ptr, lens_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    n = tl.load(lens_ptr + pid)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, n):
        x = tl.load(x_ptr + i * BLOCK * BLOCK + offs[:, None] * BLOCK + offs[None, :])
        acc += tl.sum(x, axis=0)
    tl.store(out_ptr + pid * BLOCK + offs, acc)


CONFIGS = [
    {
        "name": "seg_colsum",
        "kernel": "seg_colsum",
        "signature": {"x_ptr": "*fp32", "lens_ptr": "*i32", "out_ptr": "*fp32", "BLOCK": "constexpr"},
        "constexprs": {"BLOCK": 64},
        "num_warps": 4,
    },
]
