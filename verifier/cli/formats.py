"""The formats users write for the commands, as their ``--help`` prints them (kept here so the
help and the docs say the same; ``tests/test_cli.py`` holds them to the readers' own rules).
"""

from __future__ import annotations

from bankproof.models.version import DOCS

# the file formats each command reads, by the page of docs/reference/formats that gives every field
COMMAND_FORMATS = {
    "verify": ("spec",), "synth": ("spec", "engines"), "explain": ("spec",), "convert": ("spec",),
    "gpu": ("spec",), "show": ("spec",), "serve": ("spec",), "agree": ("agree",),
    "wavefronts": ("wavefronts",), "kernel": ("profile",), "triton profile": ("profile",),
    "triton corpus": ("kernels", "baseline"), "triton replay": ("capture",),
}  # fmt: skip


FORMAT_TITLES = {
    "spec": "spec files", "engines": "engine tables", "agree": "agree specs", "kernels": "kernels files",
    "wavefronts": "wavefronts lines", "profile": "profile exports", "baseline": "baseline files",
    "capture": "capture directories",
}  # fmt: skip


FORMATS_HEAD = "file format"  # how the help's closing lines start (argparse leaves them unwrapped)


def format_pages(command: str) -> str:
    """The ``--help`` line naming the reference pages of the formats ``command`` reads.

    >>> print(format_pages("agree"))
    file format:
      https://github.com/bankproof/bankproof/blob/main/docs/reference/formats/agree.md
    """
    pages = [f"  {DOCS}/reference/formats/{name}.md" for name in COMMAND_FORMATS[command]]
    return "\n".join([FORMATS_HEAD + ("s:" if len(pages) > 1 else ":"), *pages])


KERNELS_FILE_HELP = """\
kernels file (--kernels FILE.py): Python defining @triton.jit kernels and CONFIGS, a list of
tables, one compile each:

  CONFIGS = [{"name": "mm_128x128", "kernel": "matmul",
              "signature": {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "K": "i32"},
              "constexprs": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64},
              "num_warps": 8, "num_stages": 3, "archs": ["sm90"]}]

  name       text naming the compile in reports and the baseline            required
  kernel     the name of a @triton.jit function in the file                 required
  signature  argument -> Triton type ("*fp16", "i32", "fp32", ...)          required
  constexprs constexpr argument -> value                                    default {}
  num_warps  1 to 32, a power of two                                        default 4
  num_stages 1 to 16                                                        default 3
  archs      which of sm80, sm90, sm100, gfx942, gfx950 it is written for   default all
Every pointer and integer argument gets tt.divisibility = 16, as a typical launch would. The file is
imported (it runs with your privileges): give it only files you would run yourself."""
