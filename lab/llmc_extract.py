"""The device code of llm.c's kernel development files (github.com/karpathy/llm.c, dev/cuda/*.cu,
MIT licence) as NVRTC compiles it: common.h's device helpers (lines 8-54: ceil_div, warpReduceSum,
blockReduce; lines 103-203: Packed128, load128/store128, floatX) and each file's "GPU kernels"
section, verbatim, with the host includes dropped and ``extern "C"`` wrappers that instantiate the
templates. The kernels are the subjects of a measured corpus (examples/cuda/public/), not project code.

    python -m lab.llmc_extract /work/.mirror/karpathy+llm.c/repo examples/cuda/public
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

HEAD = """// Extracted by lab/llmc_extract.py from github.com/karpathy/llm.c (commit {commit}, MIT licence):
// dev/cuda/common.h's device helpers and dev/cuda/{name}'s "GPU kernels" section, verbatim.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#define FLT_MAX 3.402823466e+38F
#define INFINITY __int_as_float(0x7f800000)
#define MAX_1024_THREADS_BLOCKS 1
#include <cuda/std/type_traits>
namespace std {{ using cuda::std::bool_constant; }}
"""


# templated kernels the corpus measures, instantiated at float (the files' own default type)
INSTANCES = {
    "layernorm_backward.cu": """
// instantiations for the measured corpus (float everywhere)
template __global__ void layernorm_backward_kernel2<float, float, float, float>(float*, float*, float*,
    const float*, const float*, const float*, const float*, const float*, int, int, int, float*, float*);
template __global__ void layernorm_backward_kernel3<float, float, float, float>(float*, float*, float*,
    const float*, const float*, const float*, const float*, const float*, int, int, int);
""",
}


def _show(repo: Path, path: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{path}"], capture_output=True, text=True,
                          check=True).stdout  # fmt: skip


def common(repo: Path) -> str:
    lines = _show(repo, "dev/cuda/common.h").split("\n")
    keep = lines[7:54] + lines[102:203]
    text = "\n".join(line for line in keep if "extern cudaDeviceProp" not in line)
    return text.replace("#if defined(ENABLE_BF16)", "#if 0")


def kernels(repo: Path, name: str) -> str:
    text = _show(repo, f"dev/cuda/{name}")
    m = re.search(r"^// GPU kernels", text, re.M) or re.search(
        r"^(?:template|__device__|__global__)", text, re.M
    )
    e = re.search(r"^// kernel launcher", text, re.M) or re.search(r"^int main", text, re.M)
    body = text[m.start() : e.start() if e else len(text)]
    body = body.rsplit("// ---", 1)[0] if body.rstrip().endswith("-") else body
    return "namespace cg = cooperative_groups;\n" + body


def main(repo: str, out: str, names: list[str]) -> None:
    r = Path(repo)
    commit = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, text=True).stdout[
        :12
    ]
    for name in names:
        src = HEAD.format(commit=commit, name=name) + common(r) + "\n" + kernels(r, name)
        src = re.sub(r"^#include \"common.h\"$", "", src, flags=re.M)
        src += INSTANCES.get(name, "")
        Path(out, f"llmc_{name[:-3]}.cu").write_text(src)
        print(name)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
