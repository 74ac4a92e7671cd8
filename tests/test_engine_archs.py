"""Synthesis only under engines the arch has (issue 55, item 5): a TMA box or a wgmma/tcgen05
descriptor in an sm80 spec (or an AMD one) is refused naming the engine and the arch, never a
constrained optimum "proved by exhaustion"; sm90 and sm100 take both."""

from __future__ import annotations

from pathlib import Path

import pytest
from bankproof.models.errors import InputError
from bankproof.verifier import api
from bankproof.verifier.api.spec_file import tomllib

SPEC = Path(__file__).resolve().parents[1] / "examples" / "synth" / "transpose_32x32_f32_tma_load.toml"


@pytest.mark.parametrize("arch", ["sm80"])
@pytest.mark.parametrize("engine", [{"tma": "any"}, {"descriptor": "any", "major": "K"}])
def test_an_engine_the_arch_lacks_is_refused(arch, engine):
    spec = tomllib.loads(SPEC.read_text())
    spec["arch"] = arch
    spec["engine"] = [engine]
    kind = next(iter(engine))
    with pytest.raises(InputError, match=rf"engine\[0\]\.{kind} is not an engine {arch} has"):
        api.synth(spec=spec)


def test_hopper_takes_the_tma_engine():
    spec = tomllib.loads(SPEC.read_text())
    assert spec["arch"] == "sm90"
    r = api.synth(spec=spec)
    assert r.constrained is not None
