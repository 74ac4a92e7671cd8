"""Hostile input on the newer surfaces, one test per class (issue 40): refused with exit 2 naming the
field (an ``InputError`` from the API), or answered; never a traceback, exit 70 or a hang."""

from __future__ import annotations

import pytest
from bankproof.models.errors import InputError
from bankproof.verifier.cli.main import main

import bankproof

SUB_BYTE = ["e2m1", "i4", "u4", "f4e2m1fn"]


@pytest.mark.parametrize("dtype", SUB_BYTE)
def test_a_tma_box_of_sub_byte_elements_is_refused_everywhere(dtype, tmp_path, capsys):
    """Once a ZeroDivisionError through layout, verify, synth, show and the API."""
    assert main(["layout", "tma:128B", "--shape", "64x128", "--dtype", dtype]) == 2
    err = capsys.readouterr().err
    assert "tma: dtype must be whole bytes" in err and "Traceback" not in err
    with pytest.raises(InputError, match="dtype must be whole bytes"):
        bankproof.layout("tma:128B", shape=[64, 128], dtype=dtype)
    spec = tmp_path / "s.toml"
    spec.write_text(
        f'shape = [64, 128]\ndtype = "{dtype}"\n[memory]\ntma = "128B"\n'
        "[[access]]\nname = 'a'\nkind = 'load'\nlayout.bases = {register = [[0, 1]], lane = [[0, 2], [0, 4], "
        "[0, 8], [0, 16], [0, 32]]}\n"
    )
    for command in ("verify", "synth", "show"):
        assert main([command, str(spec)]) == 2, command
        err = capsys.readouterr().err
        assert "Traceback" not in err and "internal error" not in err and err.count("\n") == 1, err
