"""The corpus's results store cannot lie (issue 40): a stored entry edited by hand, of another shape,
inconsistent with itself, too large, or not a regular file is computed again and named, never
reported as a result; and reading it never hangs."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from bankproof.verifier.triton import store as store_module
from bankproof.verifier.triton.corpus_records import CorpusEntry
from bankproof.verifier.triton.scan import scan_text
from bankproof.verifier.triton.store import ResultStore

SAMPLE = Path(store_module.__file__).parent / "sample.ttgir"
KEY = "ab" * 32


@pytest.fixture
def stored(tmp_path):
    s = ResultStore(tmp_path)
    entry = CorpusEntry(config="k", arch="sm90", report=scan_text(SAMPLE.read_text(), "k.ttgir"), lowering=())
    s.save(KEY, entry)
    return s, entry, tmp_path / KEY[:2] / f"{KEY}.json"


def test_an_entry_reads_back_as_written(stored):
    s, entry, _ = stored
    assert s.load(KEY) == entry and s.refused == []


def test_one_byte_changed_is_recomputed_and_named(stored):
    s, _, path = stored
    text = path.read_text()
    assert '"wavefronts": 272' in text
    path.write_text(text.replace('"wavefronts": 272', '"wavefronts": 273', 1))
    assert s.load(KEY) is None
    assert s.refused == [f"{KEY[:12]}: its digest does not match its content (changed since it was written)"]


@pytest.mark.parametrize("edit", ["error", "config", "numbers"])
def test_an_edit_with_its_digest_made_again_is_still_checked(stored, edit):
    """A hand edit that also rewrites the digest: a renamed config or an error written in is the
    content the digest now vouches for (and is then a result the file's key no longer matches:
    the key names the config); numbers that contradict each other are refused."""
    s, entry, path = stored
    data = json.loads(path.read_text())
    body = data["entry"]
    if edit == "numbers":
        body["report"]["buffers"][0]["accesses"][1]["wavefronts"] = 1  # below its ideal of 16
    elif edit == "error":
        body["error"] = "made up"
    else:
        body["config"] = "other"
    data["digest"] = store_module.digest(KEY, body)
    path.write_text(json.dumps(data))
    got = s.load(KEY)
    if edit == "numbers":
        assert got is None and "its wavefronts are not the sum of its accesses'" in s.refused[0]
    else:
        assert got == replace(entry, **{"error" if edit == "error" else "config": body[edit]})


@pytest.mark.parametrize("body", ['{"config": "k", "arch": "sm90"}', "[1, 2]", '"text"', "{", "\x00"])
def test_json_of_another_shape_is_recomputed(stored, body):
    s, _, path = stored
    path.write_text(body)
    assert s.load(KEY) is None and len(s.refused) == 1


def test_a_fifo_a_folder_and_a_huge_file_are_refused_without_reading(stored, monkeypatch):
    s, _, path = stored
    path.unlink()
    os.mkfifo(path)  # opening it would wait for a writer
    assert s.load(KEY) is None and "not a regular file" in s.refused[-1]
    path.unlink()
    path.mkdir()
    assert s.load(KEY) is None and "folder" in s.refused[-1]
    path.rmdir()
    with open(path, "wb") as fh:  # 3 GB, sparse: never read whole
        fh.truncate(3 << 30)
    assert s.load(KEY) is None and "larger than" in s.refused[-1]
    path.unlink()
    assert s.load(KEY) is None and len(s.refused) == 3  # absent: nothing to say


def test_the_refused_entries_reach_the_summary():
    from bankproof.verifier.render.scan import corpus_summary
    from bankproof.verifier.triton.results import CorpusResult

    r = CorpusResult(1, (CorpusEntry(config="k", arch="sm90", error="x"),), (), (), (), ("abc: changed",))
    assert ", 1 stored entries not trusted (computed again): exit 0" in corpus_summary(r, 0)
