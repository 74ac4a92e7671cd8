"""The Triton wing's one pipeline: a compile is read once (one TTGIR reading, one sites reading, one
PTX parse) and analysed once by :func:`pipeline.analyse`, whoever asks: the scan command with its
PTX, the corpus's job, the profile. Counted by wrapping the readers."""

from __future__ import annotations

import pytest
from bankproof.verifier.triton import pipeline, source

CALLS: dict[str, int] = {}


@pytest.fixture
def counted(monkeypatch):
    CALLS.clear()
    for module, name in ((source, "read_ttgir"), (source, "read_sites"), (source, "parse_program"),
                         (pipeline, "analyse")):  # fmt: skip
        real = getattr(module, name)

        def wrapper(*a, _real=real, _name=name, **k):
            CALLS[_name] = CALLS.get(_name, 0) + 1
            return _real(*a, **k)

        monkeypatch.setattr(module, name, wrapper)
    # the consumers must not read again: their own readers fail the test if called
    from bankproof.verifier.triton import descriptors, ledger, scan

    def no(*a, **k):
        raise AssertionError("a text was read a second time")

    monkeypatch.setattr(ledger, "parse_program", no)
    monkeypatch.setattr(ledger, "read_sites", no)
    monkeypatch.setattr(descriptors, "parse_kernel", no)
    from bankproof.verifier.kernel import analyse as kernel_analyse

    monkeypatch.setattr(kernel_analyse, "read_module", no)  # the ledger's run takes the same reading
    monkeypatch.setattr(descriptors, "read_ttgir", no)
    monkeypatch.setattr(scan, "read_ttgir", no)
    return CALLS


@pytest.fixture(scope="module")
def compiled():
    pytest.importorskip("triton")
    from bankproof.verifier.triton.corpus_configs import builtin_configs
    from bankproof.verifier.triton.jobs import compile_kernel

    config = next(c for c in builtin_configs() if c["kernel"] == "matmul_tma")
    return config["name"], compile_kernel(config, "sm90")


@pytest.mark.triton
def test_a_corpus_job_reads_each_text_once(compiled, counted):
    from bankproof.verifier.triton.jobs import make_entry

    name, (ttgir, ptx) = compiled
    entry = make_entry(name, "sm90", (ttgir, ptx), None)
    assert entry.ledger.entries and entry.descriptors is not None
    assert counted == {"read_ttgir": 1, "read_sites": 1, "parse_program": 1, "analyse": 1}


@pytest.mark.triton
def test_the_scan_command_reads_each_text_once(compiled, counted):
    import bankproof

    name, (ttgir, ptx) = compiled
    r = bankproof.scan_ttgir([ttgir, ttgir], path=["a.ttgir", "b.ttgir"], ptx=[ptx, ptx])
    assert all(rep.ledger is not None for rep in r.reports)
    assert counted == {"read_ttgir": 2, "read_sites": 2, "parse_program": 2, "analyse": 2}


def test_without_ptx_only_the_ttgir_is_read(counted):
    from pathlib import Path

    import bankproof

    text = (Path(pipeline.__file__).parent / "sample.ttgir").read_text()
    bankproof.scan_ttgir(text, path="sample.ttgir")
    assert counted == {"read_ttgir": 1, "analyse": 1}
