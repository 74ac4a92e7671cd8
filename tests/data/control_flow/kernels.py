"""Small Triton kernels, one per kind of control flow the ledger must decide or name (runtime
branch with both arms, decided branch, early return, flattened persistent epilogue, min-bounded
loop, loop bound loaded from memory); lab/control_flow.py compiles them into this folder."""

import triton
import triton.language as tl


@triton.jit
def both_arms(x_ptr, y_ptr, M, BM: tl.constexpr):
    r = tl.arange(0, BM)
    x = tl.load(x_ptr + r[:, None] * BM + r[None, :])
    if M % BM == 0:  # noqa: SIM108 - a runtime branch with two arms, not a select
        s = tl.sum(x, axis=0)
    else:
        s = tl.max(x, axis=0)
    tl.store(y_ptr + r, s)


@triton.jit
def early_return(x_ptr, y_ptr, BM: tl.constexpr):
    pid = tl.program_id(0)
    if pid == 0:
        return
    r = tl.arange(0, BM)
    x = tl.load(x_ptr + r[:, None] * BM + r[None, :])
    tl.store(y_ptr + r, tl.sum(x, axis=0))


@triton.jit
def min_loop(x_ptr, y_ptr, K, BM: tl.constexpr):
    r = tl.arange(0, BM)
    acc = tl.zeros((BM,), dtype=tl.float32)
    for k in range(0, tl.minimum(K, 4 * BM), BM):
        x = tl.load(x_ptr + k + r[:, None] * BM + r[None, :])
        acc += tl.sum(x, axis=0)
    tl.store(y_ptr + r, acc)


@triton.jit
def loaded_loop(x_ptr, n_ptr, y_ptr, BM: tl.constexpr):
    r = tl.arange(0, BM)
    n = tl.load(n_ptr)
    acc = tl.zeros((BM,), dtype=tl.float32)
    for k in range(0, n, BM):
        x = tl.load(x_ptr + k + r[:, None] * BM + r[None, :])
        acc += tl.sum(x, axis=0)
    tl.store(y_ptr + r, acc)


@triton.jit
def decided_branch(x_ptr, y_ptr, BM: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    r = tl.arange(0, BM)
    x = tl.load(x_ptr + r[:, None] * BM + r[None, :])
    if pid_m > pid_n:
        tl.store(y_ptr + r, tl.sum(x, axis=0))


@triton.jit
def flat_persistent(x_ptr, y_ptr, k_tiles, n_tiles, BM: tl.constexpr):
    """A flattened persistent loop (as Triton's persistent matmul tutorial writes it): the
    epilogue runs when ki reaches k_tiles - 1, once per tile, under an if inside the loop."""
    r = tl.arange(0, BM)
    ki = -1
    acc = tl.zeros((BM,), dtype=tl.float32)
    for _ in range(0, k_tiles * n_tiles):
        ki = tl.where(ki == k_tiles - 1, 0, ki + 1)
        x = tl.load(x_ptr + ki * BM + r[:, None] * BM + r[None, :])
        acc += tl.sum(x, axis=1)
        if ki == k_tiles - 1:
            y = tl.max(x, axis=0)
            tl.store(y_ptr + r, y + acc)
            acc = tl.zeros((BM,), dtype=tl.float32)
