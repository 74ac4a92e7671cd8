"""The built-in corpus's configurations: matmuls (Ampere, Hopper and Blackwell styles, every dtype
and tile shape the corpus covers) and the kernels Hopper/Blackwell code is written as now (scans,
histograms, gathers, sorts, reductions, cross-entropy, split-K, warp-specialized TMA matmul and
attention through tensor descriptors). Each is a dict :mod:`~bankproof.verifier.triton.corpus`
compiles.

>>> c = builtin_configs()[0]
>>> sorted(c)
['constexprs', 'kernel', 'name', 'num_stages', 'num_warps', 'signature']
"""

from __future__ import annotations

PTR = {"fp16": "*fp16", "bf16": "*bf16", "fp32": "*fp32", "fp8": "*fp8e4nv", "i8": "*i8"}


def _mm(name, dtype, bm, bn, bk, warps, stages, kernel="matmul", b_dtype=None, out=None):
    a = PTR[dtype]
    sig = {
        "a_ptr": a,
        "b_ptr": PTR[b_dtype or dtype],
        "c_ptr": PTR[out or ("fp16" if dtype == "fp8" else dtype)],
    }
    sig.update({"M": "i32", "N": "i32", "K": "i32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"})
    config = {
        "name": name,
        "kernel": kernel,
        "signature": sig,
        "constexprs": {"BM": bm, "BN": bn, "BK": bk},
        "num_warps": warps,
        "num_stages": stages,
    }
    if "fp8" in (dtype, b_dtype):  # fp8 tensor-core dots need sm89 or newer
        config["archs"] = ["sm90", "sm100"]
    return config


def builtin_configs() -> list[dict]:
    """>= 40 configurations: matmuls (pointer and TMA-descriptor), transposes, attention, layer
    norm, softmax, a reduction, gather/scatter and a mixed-precision matmul."""
    out = []
    for dtype in ("fp16", "bf16", "fp32", "fp8"):
        for bm, bn, bk, warps, stages in (
            (128, 128, 32, 4, 3),
            (128, 64, 64, 4, 2),
            (64, 64, 32, 2, 3),
            (64, 128, 64, 4, 4),
            (128, 256, 64, 8, 3),
            (32, 32, 32, 1, 2),
        ):
            out.append(
                _mm(f"matmul_{dtype}_{bm}x{bn}x{bk}_w{warps}_s{stages}", dtype, bm, bn, bk, warps, stages)
            )
    for bm, bn, bk, warps in ((128, 128, 32, 4), (64, 64, 64, 4)):
        out.append(
            _mm(
                f"matmul_mixed_f16xi8_{bm}x{bn}x{bk}",
                "fp16",
                bm,
                bn,
                bk,
                warps,
                3,
                "matmul_mixed",
                "i8",
                "fp16",
            )
        )
    for dtype in ("fp32", "fp16", "i8"):
        for b, warps in ((32, 1), (64, 4), (128, 8)):
            out.append(
                {
                    "name": f"transpose_{dtype}_{b}_w{warps}",
                    "kernel": "transpose",
                    "signature": {"x_ptr": PTR[dtype], "y_ptr": PTR[dtype], "B": "constexpr"},
                    "constexprs": {"B": b},
                    "num_warps": warps,
                    "num_stages": 1,
                }
            )
    for bm, bn, d, warps in ((64, 64, 64, 4), (128, 64, 64, 8), (128, 128, 128, 8)):
        sig = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "L": "i32"}
        out.append(
            {
                "name": f"attention_fwd_{bm}x{bn}_d{d}_w{warps}",
                "kernel": "attention_fwd",
                "signature": {**sig, "BM": "constexpr", "BN": "constexpr", "D": "constexpr"},
                "constexprs": {"BM": bm, "BN": bn, "D": d},
                "num_warps": warps,
                "num_stages": 2,
            }
        )
    for kernel in ("layer_norm", "softmax"):
        for dtype, n, r, warps in (("fp16", 1024, 4, 4), ("fp32", 256, 16, 4)):
            sig = {"x_ptr": PTR[dtype], "y_ptr": PTR[dtype]}
            if kernel == "layer_norm":
                sig["w_ptr"] = "*fp32"
            out.append(
                {
                    "name": f"{kernel}_{dtype}_{r}x{n}_w{warps}",
                    "kernel": kernel,
                    "signature": {**sig, "N": "constexpr", "R": "constexpr"},
                    "constexprs": {"N": n, "R": r},
                    "num_warps": warps,
                    "num_stages": 1,
                }
            )
    for m, n, warps in ((64, 128, 4), (256, 64, 8)):
        out.append(
            {
                "name": f"column_sum_fp32_{m}x{n}_w{warps}",
                "kernel": "column_sum",
                "signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "M": "constexpr", "N": "constexpr"},
                "constexprs": {"M": m, "N": n},
                "num_warps": warps,
                "num_stages": 1,
            }
        )
    out.append(_mm("matmul_fp16_256x128x32_w8_s4", "fp16", 256, 128, 32, 8, 4))
    out.append(_mm("matmul_bf16_64x256x32_w8_s3", "bf16", 64, 256, 32, 8, 3))
    for kernel in ("layer_norm", "softmax"):
        sig = {"x_ptr": "*bf16", "y_ptr": "*bf16", **({"w_ptr": "*fp32"} if kernel == "layer_norm" else {})}
        out.append(
            {
                "name": f"{kernel}_bf16_8x512_w8",
                "kernel": kernel,
                "signature": {**sig, "N": "constexpr", "R": "constexpr"},
                "constexprs": {"N": 512, "R": 8},
                "num_warps": 8,
                "num_stages": 1,
            }
        )
    out.append(
        {
            "name": "gather_scatter_fp16_64x64_w4",
            "kernel": "gather_scatter",
            "signature": {
                "x_ptr": "*fp16",
                "idx_ptr": "*i32",
                "y_ptr": "*fp16",
                "M": "constexpr",
                "N": "constexpr",
            },
            "constexprs": {"M": 64, "N": 64},
            "num_warps": 4,
            "num_stages": 1,
        }
    )
    # TMA-descriptor matmuls (sm90/sm100): TMA fills the operand tiles, the epilogue tile goes
    # through shared memory to the TMA store (stmatrix on sm90).
    for dtype, bm, bn, bk, warps in (
        ("fp16", 128, 128, 64, 4),
        ("fp16", 64, 64, 32, 4),
        ("fp16", 128, 256, 64, 8),
        ("bf16", 128, 128, 64, 4),
        ("fp8", 128, 128, 128, 4),
    ):
        config = _mm(f"matmul_tma_{dtype}_{bm}x{bn}x{bk}_w{warps}", dtype, bm, bn, bk, warps, 3, "matmul_tma")
        config["archs"] = ["sm90", "sm100"]
        out.append(config)
    return out + _today()


def _one(
    name: str, kernel: str, sig: dict, constexprs: dict, warps: int, stages: int = 1, archs=None
) -> dict:
    config = {"name": name, "kernel": kernel, "signature": {**sig, **dict.fromkeys(constexprs, "constexpr")},
              "constexprs": constexprs, "num_warps": warps, "num_stages": stages}  # fmt: skip
    if archs:
        config["archs"] = archs
    return config


def _today() -> list[dict]:
    """Kernels written the way Hopper/Blackwell code is written now: scans, histograms, gathers,
    sorts, cross-warp reductions, cross-entropy, split-K, a persistent warp-specialized TMA
    matmul and attention through tensor descriptors."""
    xy = {"x_ptr": "*fp32", "y_ptr": "*fp32"}
    out = [
        _one("cumsum_fp32_4096_w8", "cumsum", xy, {"N": 4096}, 8),
        _one("cumsum_fp32_1024_w4", "cumsum", xy, {"N": 1024}, 4),
        _one("histogram_i32_4096_64_w4", "histogram", {"x_ptr": "*i32", "y_ptr": "*i32"},
             {"N": 4096, "BINS": 64}, 4),
        _one("gather_rows_fp32_64x64_w4", "gather_rows", {"x_ptr": "*fp32", "idx_ptr": "*i32",
             "y_ptr": "*fp32"}, {"M": 64, "N": 64}, 4),
        _one("sort_rows_fp32_16x128_w4", "sort_rows", xy, {"M": 16, "N": 128}, 4),
        _one("column_max_fp32_64x256_w8", "column_max", xy, {"M": 64, "N": 256}, 8),
        _one("column_max_fp16_128x64_w4", "column_max", {"x_ptr": "*fp16", "y_ptr": "*fp16"},
             {"M": 128, "N": 64}, 4),
    ]  # fmt: skip
    ce = {"logits_ptr": "*fp16", "target_ptr": "*i32", "loss_ptr": "*fp32"}
    out += [
        _one("cross_entropy_fp16_4x2048_w4", "cross_entropy", ce, {"N": 2048, "R": 4}, 4),
        _one("cross_entropy_fp16_16x512_w8", "cross_entropy", ce, {"N": 512, "R": 16}, 8),
    ]
    mm = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32"}
    out += [
        _one(
            "matmul_split_k_fp16_128x128x32_w4", "matmul_split_k", mm, {"BM": 128, "BN": 128, "BK": 32}, 4, 3
        ),
        _one("matmul_split_k_fp16_64x64x64_w4", "matmul_split_k", mm, {"BM": 64, "BN": 64, "BK": 64}, 4, 3),
    ]
    att = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "L": "i32"}
    for bm, bn, d, warps in ((128, 64, 64, 4), (128, 128, 128, 8)):
        out.append(_one(f"attention_fwd_tma_{bm}x{bn}_d{d}_w{warps}", "attention_fwd_tma", att,
                        {"BM": bm, "BN": bn, "D": d}, warps, 2, ["sm90", "sm100"]))  # fmt: skip
    mm16 = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
    out += [
        _one(f"matmul_tma_persistent_ws_fp16_{bm}x{bn}x{bk}_w{warps}", "matmul_tma_persistent_ws", mm16,
             {"BM": bm, "BN": bn, "BK": bk}, warps, 3, ["sm90", "sm100"])
        for bm, bn, bk, warps in ((128, 128, 64, 4), (128, 256, 64, 8))
    ]  # fmt: skip
    out.append(_one("topk_fp32_16x256_k8_w4", "topk_rows", xy, {"M": 16, "N": 256, "K": 8}, 4))
    mx = {"a_ptr": "*fp8e4nv", "a_scale_ptr": "*u8", "b_ptr": "*fp8e4nv", "b_scale_ptr": "*u8",
          "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}  # fmt: skip
    out.append(_one("matmul_mxfp8_128x128x128_w4", "matmul_mxfp8", mx, {"BM": 128, "BN": 128, "BK": 128},
                    4, 3, ["sm90", "sm100"]))  # fmt: skip
    return out
