"""The format reference pages (``docs/reference/formats/``) are the readers' own: each page's fields
are exactly the fields its reader takes (a field added to a reader and not to its page fails, and
so does a page naming a field no reader takes), every example on a page is read by its reader, and
every command's ``--help`` names the pages of the formats it reads, each a page that exists."""

from __future__ import annotations

import ast
import json
import re
from dataclasses import fields
from pathlib import Path

import pytest
import tomllib
from bankproof.gpu_checks.source_page import COUNTERS
from bankproof.verifier.api import spec_file as spec
from bankproof.verifier.api.agree import AGREE_FIELDS, agree_spec
from bankproof.verifier.api.wavefronts import CASE_FIELDS
from bankproof.verifier.cli.formats import COMMAND_FORMATS, format_pages
from bankproof.verifier.engine import buffer_engines, placements
from bankproof.verifier.results.commands import WavefrontsResult
from bankproof.verifier.triton.corpus import BASELINE_FIELDS, CONFIG_FIELDS, check_config, load_baseline

from bankproof import InputError

DOCS = Path(__file__).resolve().parent.parent / "docs"
FORMATS = DOCS / "reference" / "formats"

ROW = re.compile(r"^\| ([^|]+?) \|", re.M)


def _prefixed(prefix: str, names) -> set[str]:
    return {f"{prefix}{n}" for n in names}


def code_fields() -> dict[str, set[str]]:
    """Each format page's fields, from the readers' own lists."""
    kinds = placements.KINDS
    return {
        "spec": {*spec.SPEC_FIELDS}
        | _prefixed("memory.", spec.MEMORY_FIELDS)
        | _prefixed("access.", spec.ACCESS_FIELDS)
        | _prefixed("layout.", spec.ACCESS_LAYOUTS)
        | _prefixed("cute_copy.", spec.CUTE_COPY_FIELDS)
        | _prefixed("cute_mma.", spec.CUTE_MMA_FIELDS),
        "engines": _prefixed("engine.", buffer_engines.FIELDS),
        "agree": {*AGREE_FIELDS, *kinds, *(k for extra in kinds.values() for k in extra)},
        "kernels": set(CONFIG_FIELDS),
        "baseline": set(BASELINE_FIELDS),
        "wavefronts": {*CASE_FIELDS, *(f.name for f in fields(WavefrontsResult))},
    }


def page_fields(text: str) -> set[str]:
    """The names in the first cell of every table row of a page (backticked), headers left out."""
    out = set()
    for cell in ROW.findall(text):
        out |= set(re.findall(r"`([^`]+)`", cell))
    return out


@pytest.mark.parametrize("name", sorted(code_fields()))
def test_each_format_page_lists_exactly_its_readers_fields(name):
    documented = page_fields((FORMATS / f"{name}.md").read_text())
    assert documented == code_fields()[name], (
        f"{name}.md: missing {sorted(code_fields()[name] - documented)}, "
        f"not read {sorted(documented - code_fields()[name])}"
    )


def test_the_check_sees_a_field_the_page_lacks():
    text = (FORMATS / "engines.md").read_text().replace("| `engine.major` |", "| major |")
    assert code_fields()["engines"] - page_fields(text) == {"engine.major"}


def test_the_profile_page_names_every_counter_read():
    assert set(COUNTERS) <= page_fields((FORMATS / "profile.md").read_text())


def _blocks(page: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", (FORMATS / page).read_text(), re.S)


def test_every_spec_example_is_read():
    blocks = _blocks("spec.md", "toml") + _blocks("engines.md", "toml")
    assert len(blocks) == 3
    for block in blocks:
        got = spec.parse_spec(tomllib.loads(block), require_memory="[memory]" in block)
        assert got.accesses
    assert spec.parse_spec(tomllib.loads(_blocks("engines.md", "toml")[0]), require_memory=False).engines


def test_every_agree_example_is_read():
    (block,) = _blocks("agree.md", "toml")
    assert agree_spec(tomllib.loads(block)).verdict == "refuted"


def test_every_kernels_example_is_read():
    blocks = _blocks("kernels.md", "python")
    assert blocks
    for block in blocks:
        for i, config in enumerate(ast.literal_eval(block.split("CONFIGS = ", 1)[1])):
            check_config(config, i)


def test_every_baseline_example_is_read(tmp_path):
    (block,) = _blocks("baseline.md", "json")
    path = tmp_path / "baseline.json"
    path.write_text(block)
    assert load_baseline(str(path)) == json.loads(block)["accesses"]


@pytest.mark.parametrize(
    "data,field",
    [
        ({"accesses": {"k": 1}, "schemas": 1}, "baseline.schemas"),
        ({"accesses": {"k": True}}, "baseline.accesses['k']"),
        ({"accesses": {"k": -1}}, "baseline.accesses['k']"),
        ({"schema": 2, "accesses": {}}, "baseline.schema"),
        ({"accesses": []}, "baseline.accesses"),
    ],
)
def test_a_bad_baseline_field_is_refused_by_name(tmp_path, data, field):
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as e:
        load_baseline(str(path))
    assert e.value.field == field


def test_a_kernels_entry_with_an_unknown_field_is_refused_by_name():
    with pytest.raises(InputError, match=r"CONFIGS\[0\]\.num_warp is not a field"):
        check_config({"name": "mm", "kernel": "mm", "signature": {}, "num_warp": 8}, 0)


def test_every_command_that_reads_a_format_links_its_pages():
    from bankproof.verifier.cli.formats import FORMAT_TITLES
    from bankproof.verifier.cli.parser import build_parser, subcommands

    helps = {command: sub.format_help() for command, sub in subcommands(build_parser())}
    for command, names in COMMAND_FORMATS.items():
        for line in format_pages(command).splitlines()[1:]:
            assert line.strip() in helps[command], command
        for name in names:
            assert (FORMATS / f"{name}.md").is_file() and name in FORMAT_TITLES
    listed = {p.stem for p in FORMATS.glob("*.md")} - {"index"}
    assert listed == {n for names in COMMAND_FORMATS.values() for n in names}


def test_a_baseline_with_an_integer_past_python_s_limit_is_refused(tmp_path):
    """Found by the baseline fuzzer: 5,000 digits raised ValueError from json.loads."""
    path = tmp_path / "baseline.json"
    path.write_text('{"accesses": {"k": 1' + "0" * 5000 + "}}")
    with pytest.raises(InputError, match="integer of 5001 digits"):
        load_baseline(str(path))


def test_every_whole_spec_shown_anywhere_in_the_docs_is_read():
    """A TOML block of any page that is a whole spec (it has a ``shape``) or a whole agree spec
    (``[writer]``) is read by its reader: no page shows an example the tool would refuse."""
    read = 0
    for page in sorted(DOCS.rglob("*.md")):
        for block in re.findall(r"```toml\n(.*?)```", page.read_text(), re.S):
            data = tomllib.loads(block)
            if "writer" in data:
                agree_spec(data)
            elif "shape" in data:
                spec.parse_spec(data, require_memory="memory" in data)
            else:
                continue
            read += 1
    assert read >= 6, read


ENGINE_SPEC = _blocks("engines.md", "toml")[0]
AGREE_SPEC = _blocks("agree.md", "toml")[0]
CONFIG = {"name": "mm", "kernel": "mm", "signature": {"a": "*fp16"}}


def _engine(**fields) -> object:
    data = tomllib.loads(ENGINE_SPEC)
    data["engine"] = [{"tma": "any", **fields}]
    return lambda: spec.parse_spec(data, require_memory=False)


def _agree(**fields) -> object:
    data = tomllib.loads(AGREE_SPEC)
    data.update(fields)
    return lambda: agree_spec(data)


def _box(box) -> object:
    data = tomllib.loads(AGREE_SPEC)
    data["reader"] = {"tma": "none", "box": box}
    return lambda: agree_spec(data)


@pytest.mark.parametrize(
    "edge,past,field",
    [  # each bound as its page states it: the edge is taken, one past it is refused naming the field
        (_engine(name="n" * 80), _engine(name="n" * 81), "engine[0].name"),
        (_engine(), _engine(major="K"), "engine[0].major"),
        (_agree(base=262143 - 262143 % 1024), _agree(base=262144), "base"),
        (_box([256, 64]), _box([257, 64]), "box"),
        (lambda: check_config({**CONFIG, "num_warps": 32}, 0), lambda: check_config({**CONFIG, "num_warps": 64}, 0),
         "CONFIGS[0].num_warps"),
        (lambda: check_config({**CONFIG, "num_stages": 16}, 0), lambda: check_config({**CONFIG, "num_stages": 17}, 0),
         "CONFIGS[0].num_stages"),
    ],
)  # fmt: skip
def test_the_documented_bounds_are_the_readers(edge, past, field):
    edge()
    with pytest.raises(InputError) as e:
        past()
    assert field in f"{e.value.where} {e.value.field}", (e.value.where, e.value.field)
