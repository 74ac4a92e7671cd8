"""The corpus's results store cannot lie (issues 40, 54), even to someone who can write its folder:
it keeps compiles (TTGIR, PTX), never conclusions, and every result is derived again on read; an
entry edited by hand, with its checksum made again or not, of another shape, too large, or not a
regular file is compiled again and named; a shard folder that is a link is not written through;
the key lives outside the store."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest
from bankproof.models.errors import InputError
from bankproof.verifier.triton import store as store_module
from bankproof.verifier.triton.dispatch import of_job
from bankproof.verifier.triton.store import Artifact, ResultStore
from bankproof.verifier.triton.store_key import key_file, store_secret

SAMPLE = Path(store_module.__file__).parent / "sample.ttgir"
KEY = "ab" * 32
JOB = ({"name": "k"}, "sm80")


@pytest.fixture
def stored(tmp_path):
    s = ResultStore(tmp_path / "store", secret=b"s" * 32)
    art = Artifact(config="k", arch="sm80", ttgir=SAMPLE.read_text(), ptx="")
    s.save(KEY, art)
    return s, art, tmp_path / "store" / KEY[:2] / f"{KEY}.json"


def test_an_entry_reads_back_and_is_derived_again(stored):
    s, art, _ = stored
    assert s.load(KEY) == art and s.refused == []
    entry = of_job(s.load(KEY), JOB, KEY, s.refused)
    assert entry.report.buffers[0].wavefronts == 272 and entry.ttgir == art.ttgir


def test_one_byte_changed_is_recompiled_and_named(stored):
    s, _, path = stored
    text = path.read_text()
    path.write_text(text.replace("ttg.local_alloc", "ttg.local_allox", 1))
    assert s.load(KEY) is None
    assert s.refused == [
        f"{KEY[:12]}: fails its authentication (changed, or written without this store's key)"
    ]


@pytest.mark.parametrize("edit", ["counts", "error", "config"])
def test_an_edit_with_its_checksum_recomputed_is_caught(stored, edit):
    """Whoever can write the folder can recompute any checksum: a SHA-256 of the content (the old
    digest) is not the key's HMAC, so the edit is refused and the entry compiled again."""
    s, _, path = stored
    data = json.loads(path.read_text())
    body = data["artifact"]
    if edit == "counts":
        body["ttgir"] = body["ttgir"].replace("16x32", "16x64")
    else:
        body[edit] = "made up"
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    data["mac"] = hashlib.sha256(f"3\0{KEY}\0{text}".encode()).hexdigest()
    path.write_text(json.dumps(data))
    assert s.load(KEY) is None and "fails its authentication" in s.refused[0]


def test_what_is_stored_is_no_conclusion(stored):
    """No count is stored, so none can be edited: the report comes from the TTGIR on every read."""
    _, _, path = stored
    data = json.loads(path.read_text())
    assert set(data["artifact"]) == {"config", "arch", "ttgir", "ptx", "error"}
    assert "wavefronts" not in path.read_text()


def test_another_key_cannot_vouch(stored, tmp_path):
    s, _, _ = stored
    other = ResultStore(s.root, secret=b"t" * 32)
    assert other.load(KEY) is None and "authentication" in other.refused[0]


@pytest.mark.parametrize("body", ['{"config": "k", "arch": "sm90"}', "[1, 2]", '"text"', "{", "\x00"])
def test_json_of_another_shape_is_recompiled(stored, body):
    s, _, path = stored
    path.write_text(body)
    assert s.load(KEY) is None and len(s.refused) == 1


def test_a_fifo_a_folder_and_a_huge_file_are_refused_without_reading(stored):
    s, _, path = stored
    path.unlink()
    os.mkfifo(path)  # opening it would wait for a writer
    assert s.load(KEY) is None and "not a regular file" in s.refused[-1]
    path.unlink()
    path.mkdir()
    assert s.load(KEY) is None and "folder" in s.refused[-1]
    s.save(KEY, Artifact(config="k", arch="sm80", error="x"))  # onto a folder: named, not raised
    assert "not stored" in s.refused[-1]
    path.rmdir()
    with open(path, "wb") as fh:  # 3 GB, sparse: never read whole
        fh.truncate(3 << 30)
    assert s.load(KEY) is None and "larger than" in s.refused[-1]
    path.unlink()
    n = len(s.refused)
    assert s.load(KEY) is None and len(s.refused) == n  # absent: nothing to say


def test_a_shard_folder_that_is_a_link_is_not_written_through(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    s = ResultStore(tmp_path / "store", secret=b"s" * 32)
    (tmp_path / "store" / KEY[:2]).symlink_to(outside)
    s.save(KEY, Artifact(config="k", arch="sm80", error="x"))
    assert list(outside.iterdir()) == [] and "not stored" in s.refused[-1]
    assert s.load(KEY) is None


def test_the_key_file_is_made_once_0600_outside_the_store(tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    first = store_secret(tmp_path / "store", env)
    path = key_file(env)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and len(first) == 32
    assert store_secret(tmp_path / "store", env) == first
    path.chmod(0o644)
    with pytest.raises(InputError, match="mode 0600"):
        store_secret(tmp_path / "store", env)
    with pytest.raises(InputError, match="inside the store"):
        store_secret(tmp_path / "cfg", env)
    for bad in ("xyz", "00" * 4):
        with pytest.raises(InputError, match="BANKPROOF_STORE_KEY"):
            store_secret(tmp_path / "store", {"BANKPROOF_STORE_KEY": bad})


def test_the_refused_entries_reach_the_summary():
    from bankproof.verifier.render.scan import corpus_summary
    from bankproof.verifier.triton.corpus_records import CorpusEntry
    from bankproof.verifier.triton.results import CorpusResult

    r = CorpusResult(1, (CorpusEntry(config="k", arch="sm90", error="x"),), (), (), (), ("abc: changed",))
    assert ", 1 stored entries not trusted (computed again): exit 0" in corpus_summary(r, 0)


def test_a_shard_that_is_a_file_is_named_not_raised(tmp_path):
    s = ResultStore(tmp_path / "store", secret=b"s" * 32)
    (tmp_path / "store" / KEY[:2]).write_text("not a folder")
    s.save(KEY, Artifact(config="k", arch="sm80", error="x"))
    assert s.load(KEY) is None and "not stored" in s.refused[-1]


@pytest.mark.triton
@pytest.mark.compile
def test_an_edited_entry_through_the_command_is_recompiled_and_the_report_true(tmp_path, capsys):
    """``triton corpus --results``: an entry edited and its checksum recomputed (SHA-256, the way
    anyone who can write the folder could) is named on stderr and the report is the true one."""
    pytest.importorskip("triton")
    from bankproof.verifier.cli.main import main

    from tests.test_triton_corpus import USER_KERNELS

    kernels = tmp_path / "kernels.py"
    kernels.write_text(USER_KERNELS)
    argv = ["triton", "corpus", "--arch", "sm80", "--kernels", str(kernels), "--results", str(tmp_path / "r"),
            "--json", "--allow-unknown"]  # fmt: skip
    main(argv)
    first = json.loads(capsys.readouterr().out)
    (path,) = (tmp_path / "r").glob("??/*.json")
    data = json.loads(path.read_text())
    body = data["artifact"]
    body["ttgir"] = body["ttgir"].replace("#ttg.swizzled_shared<{vec = 8", "#ttg.swizzled_shared<{vec = 1")
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    data["mac"] = hashlib.sha256(f"3\0{data['key']}\0{text}".encode()).hexdigest()
    path.write_text(json.dumps(data))
    main(argv)
    captured = capsys.readouterr()
    assert "results store: an entry was not trusted and was computed again" in captured.err
    assert json.loads(captured.out)["entries"] == first["entries"]
