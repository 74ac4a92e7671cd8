"""The command line every lab ncu experiment shares: ``run`` (launch the probes), ``metrics`` (the
comma-separated list for ``ncu --metrics``), ``collect CSV OUT [EXTRA]`` (pack ncu's raw CSV), and
any extra commands a module names.

>>> main("lab.gpu.x", ["metrics"], run=lambda: None, metrics=["a", "b"], collect=print)
a,b
"""

from __future__ import annotations

import sys
from collections.abc import Callable


def main(
    module: str,
    argv: list[str],
    run: Callable[[], None],
    metrics: list[str],
    collect: Callable,
    **extra: Callable[[], None],
) -> None:
    cmd = argv[0] if argv else ""
    if cmd == "run":
        run()
    elif cmd == "metrics":
        print(",".join(metrics))
    elif cmd == "collect" and len(argv) >= 3:
        collect(*argv[1:])
    elif cmd in extra:
        extra[cmd]()
    else:
        more = "".join(f" | {name}" for name in extra)
        sys.exit(f"usage: python -m {module} run | metrics{more} | collect CSV OUT")
