"""Sound by construction (issue 55, item 3): every SASS opcode the recorded GPU runs executed (every
kernel's SASS in gpu_checks/results/) is one whose effect on shared memory bankproof knows: counted
by reconciliation with the PTX, run by an engine measured to add no LSU wavefronts, or unable to
touch shared memory; a kernel whose SASS runs any other is unknown at its line."""

from __future__ import annotations

import re

from bankproof.verifier.kernel import reconcile, sass
from bankproof.verifier.kernel.sass import SassOp

from tests.records import record_strings, record_texts

_OP = re.compile(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")


def _seen() -> set[str]:
    texts = [t for f, t in record_texts() if f.suffix == ".txt"]
    texts += record_strings(lambda key, _: key == "sass")
    return {m.group(1) for t in texts for m in _OP.finditer(t)}


def test_every_sass_opcode_the_records_ran_is_known():
    seen = _seen()
    assert len({o.split(".")[0] for o in seen}) > 80
    assert sorted(o for o in seen if not sass.sass_known(o)) == []
    assert not sass.SASS_RECONCILED & sass.SASS_NO_SHARED and not sass.SASS_ENGINES & sass.SASS_NO_SHARED


def test_the_shared_opcodes_among_them_are_reconciled():
    seen = {o.split(".")[0] for o in _seen()}
    assert {"LDS", "STS", "LDSM", "STSM", "LDGSTS", "ATOMS"} <= seen & sass.SASS_RECONCILED
    assert all(sass.sass_kind(o) is not None for o in _seen() if o.split(".")[0] in sass.SASS_RECONCILED)


def test_a_sass_opcode_nobody_knows_makes_the_kernel_unknown():
    r = reconcile.reconcile([], {}, [SassOp("k", 0x40, 7, "", "FROBS.X", "R1, [R2]")], "k")
    assert r.orphans == (
        "PTX line 7: the SASS runs FROBS.X, whose effect on shared memory bankproof does not know",
    )
