"""The real-kernel corpus, part two: kernels files written here after the algorithms of public
Triton code, one file per kind of library (see each file's docstring for what it follows).
:data:`FILES` lists them; each has ``CONFIGS`` as ``bankproof triton corpus --kernels`` reads them.
A config may carry ``launch`` (integer argument values for the GPU launch, over
``lab.gpu.gpu_plan.launch_args``) and ``fills`` (an int32 value filling a pointer argument's buffer,
for kernels that load sizes or indices)."""

FILES = ["lab/public_kernels.py", "lab/public/norms.py", "lab/public/attention.py", "lab/public/matmul.py",
         "lab/public/moe_quant.py", "lab/public/linear_attn.py"]  # fmt: skip
