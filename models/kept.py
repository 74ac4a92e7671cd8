"""``kept``: the last few answers of a function of layouts kept (``functools.lru_cache``), for
arguments that can be hashed; one that cannot (a layout built from lists) is answered each time.

>>> @kept(4)
... def size(x):
...     return len(x)
>>> size((1, 2)), size([1, 2, 3]), size.cache_info().hits
(2, 3, 0)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)


def kept(maxsize: int) -> Callable[[F], F]:
    """Keep the last ``maxsize`` answers of the decorated function (``cache_clear`` and
    ``cache_info`` as ``lru_cache`` gives them)."""

    def wrap(fn: F) -> F:
        cached = functools.lru_cache(maxsize=maxsize)(fn)

        @functools.wraps(fn)
        def run(*args):
            try:
                hash(args)
            except TypeError:  # cannot be a key: computed, not kept
                return fn(*args)
            return cached(*args)

        run.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
        run.cache_info = cached.cache_info  # type: ignore[attr-defined]
        return run  # type: ignore[return-value]

    return wrap
