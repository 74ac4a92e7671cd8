"""The API floor: one module per command (values in, frozen results out), re-exported here and
by ``bankproof``. ``problem`` builds what every command reads from Python values.

>>> from bankproof.verifier.api import verify
>>> verify(spec={"shape": [32], "dtype": "f32", "memory": {"formula": "i"}, "access": [{"kind": "store",
...     "layout": {"bases": {"lane": [[1], [2], [4], [8], [16]]}}}]}).verdict
'proved'
"""

from bankproof.verifier.api.convert import convert
from bankproof.verifier.api.explain import explain
from bankproof.verifier.api.layout import layout
from bankproof.verifier.api.problem import Access, problem
from bankproof.verifier.api.scan import scan_ttgir
from bankproof.verifier.api.show import show
from bankproof.verifier.api.synth import synth
from bankproof.verifier.api.verify import verify
from bankproof.verifier.api.wavefronts import wavefronts

__all__ = [
    "Access", "convert", "explain", "layout", "problem",
    "scan_ttgir", "show", "synth", "verify", "wavefronts",
]  # fmt: skip
