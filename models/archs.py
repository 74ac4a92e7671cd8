"""The arch every command and function takes when none is named, in a module of its own so that
the command line's parser can name it without importing the models (``--help`` stays fast).
:mod:`bankproof.models.target` holds every fact about each arch.

>>> DEFAULT_ARCH
'sm90'
"""

from __future__ import annotations

DEFAULT_ARCH = "sm90"
