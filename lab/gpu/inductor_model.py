"""A small ``torch.compile``d model (issue: whole kernels on their data): Linear, GELU, LayerNorm,
a row softmax and an embedding lookup whose addresses follow its indices, so Inductor generates
pointwise, reduction and gather kernels. Run twice: the first call compiles, the second (inside the
NVTX range ``measure``) is what Nsight Compute measures.

    python3 -m lab.gpu.inductor_model
"""

from __future__ import annotations

import torch


class Small(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(1000, 256)
        self.lin = torch.nn.Linear(256, 512)
        self.norm = torch.nn.LayerNorm(512)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = self.norm(torch.nn.functional.gelu(self.lin(self.emb(ids))))
        return torch.softmax(h, dim=-1)


def run() -> list[float]:
    torch.manual_seed(0)
    model = Small().cuda()
    ids = torch.randint(0, 1000, (64,), device="cuda")
    fn = torch.compile(model)
    fn(ids)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("measure")
    y = fn(ids)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    return y[0, :4].tolist()


if __name__ == "__main__":
    print(run())
