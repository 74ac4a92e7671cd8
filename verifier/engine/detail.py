"""What a page shows of one access beyond its answer: each warp instruction's wavefronts and ideal
(:func:`per_instruction`) and Lemma 9.4's spaces (:func:`lemma`), from the same problem
:func:`~bankproof.verifier.engine.answer.answer` takes, so the workbench counts nothing itself.

>>> from bankproof.models.layout import LinearLayout
>>> from bankproof.verifier.engine.answer import AccessProblem
>>> lay = LinearLayout.from_bases({"register": [[1]], "lane": [[2], [4], [8], [16], [32]], "warp": []},
...                               {"dim0": 64})
>>> p = AccessProblem(memory=LinearLayout.identity1d(64, "offset", "dim0"), layout=lay, elem_bits=32,
...                   kind="load", instr="ld.shared.b32")
>>> counts, ideals = per_instruction(p)
>>> counts.tolist(), ideals.tolist()
([2, 2], [1, 1])
>>> lemma(p, 1).wavefronts_per_instruction
2
"""

from __future__ import annotations

import numpy as np
from bankproof.models import target
from bankproof.models.errors import log2
from bankproof.models.layout import LinearLayout
from bankproof.models.lemmas import Lemma94, lemma_9_4
from bankproof.verifier.engine.answer import AccessProblem, choose


def per_instruction(p: AccessProblem) -> tuple[np.ndarray, np.ndarray]:
    """Each warp instruction's wavefronts and ideal, in the order the target issues them."""
    a = target.build(p.arch, p.layout, p.memory, p.elem_bits, p.kind, choose(p))
    c = target.count(p.arch, a)
    return c.counts, c.ideals


def lemma(p: AccessProblem, vector: int) -> Lemma94 | None:
    """Lemma 9.4 for the access at ``vector`` elements per lane (``None``: the memory is padded)."""
    if not isinstance(p.memory, LinearLayout):
        return None
    mem = p.memory.with_in_bases("block", [])
    return lemma_9_4(mem, p.layout, p.elem_bits, p.kind, log2(vector))
