"""Fuzzers for the newer entry points (issue 40): descriptor values and ``--fields``, ``tma:`` boxes,
ncu source-page exports, corpus ``CONFIGS`` and baseline files, the results store's files, and the workbench's request
headers, ``verify_many``'s lists of layouts (agree specs are fuzzed in test_fuzz_entry_points.py). Every case answers or is refused with
an ``InputError`` naming the field (``tests/fuzzing.py``); a command line never exits 70. Seeds
fixed; counts scale with ``BANKPROOF_FUZZ_SCALE``."""

from __future__ import annotations

import contextlib
import io
import json
import random
import traceback
from collections import Counter
from pathlib import Path

import pytest
from bankproof.gpu_checks.source_page import read_export
from bankproof.models.errors import InputError
from bankproof.verifier.cli.main import main
from bankproof.verifier.triton.corpus import check_config, load_baseline
from bankproof.verifier.triton.store import Artifact, ResultStore

import bankproof
from tests.fuzzing import check, count, mutate, mutate_value, show

pytestmark = pytest.mark.fuzz

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def _run(cases: int, seed: int, one) -> Counter:
    rng = random.Random(seed)
    seen: Counter = Counter()
    failures: dict[str, str] = {}
    for _ in range(cases):
        call, case = one(rng)
        try:
            seen[check(call, case)] += 1
        except Exception as e:  # noqa: BLE001 - collected, then reported together
            tb = traceback.extract_tb(e.__traceback__)[-1]
            key = f"{type(e).__name__} at {Path(tb.filename).name}:{tb.lineno}"
            failures.setdefault(key, f"{key}: {str(e)[:200]} <- {show(case)}")
    assert not failures, "\n".join(failures.values())
    return seen


def _command(argv: list[str]):
    """A command line as a fuzz call: exit 2 is a refusal, 0/1/3/4 an answer; 70 (or a traceback)
    fails the case."""

    def call():
        out, err = io.StringIO(), io.StringIO()
        try:
            code = main(argv, out, err)
        except SystemExit as e:  # argparse's own refusals (a choice not offered): exit 2
            code = e.code
        assert code != 70 and "Traceback" not in err.getvalue(), f"exit {code}: {err.getvalue()[:300]}"
        if code == 2:
            raise InputError("cli", "input", err.getvalue().strip()[:300] or "refused")
        return None

    return call


def test_descriptor_values_and_fields():
    values = ["0x4000004000010040", "0x4000404000010040", "4611686293305327104", "0x0", "0xffffffffffffffff"]
    fields = ["start=0,lbo=16,sbo=1024,swizzle=128B", "start=1024,lbo=16,sbo=512,swizzle=64B,base_offset=1"]

    def one(rng):
        arch = rng.choice(["sm90", "sm100", "sm80", ""])
        extra = rng.choice([[], ["--major", "MN"], ["--rows", mutate("64", rng, 1)], ["--dtype", rng.choice(
            ["f16", "e4m3", "half_t", "i4", "x"])]])  # fmt: skip
        if rng.random() < 0.5:
            argv = [
                "descriptor",
                mutate(rng.choice(values), rng, rng.choice([0, 1, 2])),
                "--arch",
                arch,
                *extra,
            ]
        else:
            argv = [
                "descriptor",
                "--fields",
                mutate(rng.choice(fields), rng, rng.choice([0, 1, 2])),
                "--arch",
                arch,
            ]
        return _command(argv), argv

    seen = _run(count(1500), 12, one)
    assert seen["ok"] > 100 and seen["refused"] > 400, seen


def test_tma_boxes():
    def one(rng):
        mode = mutate(rng.choice(["128B", "64B", "32B", "none", "128B_atom32"]), rng, rng.choice([0, 0, 1]))
        shape = rng.choice([[64, 64], [8, 32], [128, 16], [1, 1], [0, 64], [64, 3], [4096, 4096]])
        dtype = rng.choice(["f16", "f32", "e2m1", "i4", "i8", "f64"])
        return (lambda: bankproof.layout(f"tma:{mode}", shape=shape, dtype=dtype)), (mode, shape, dtype)

    seen = _run(count(3000), 13, one)
    assert seen["ok"] > 300 and seen["refused"] > 300, seen


def test_profile_exports():
    from bankproof.gpu_checks.results import RESULTS

    record = json.loads((RESULTS / "h200-2026-11-26-profile-exports.json").read_text())
    texts = [e["csv"] for e in record["exports"][:6]]

    def one(rng):
        text = rng.choice(texts)
        lines = text.splitlines()
        for _ in range(rng.choice([1, 1, 2, 3])):  # one row mutated (a whole-text edit would mostly cut it)
            k = rng.randrange(len(lines))
            lines[k] = mutate(lines[k], rng, rng.choice([1, 2]))
        case = "\n".join(lines)
        return (lambda: read_export(case)), case[:300]

    seen = _run(count(20000), 14, one)
    assert seen["ok"] > 1000 and seen["refused"] > 1000, seen


def test_corpus_configs():
    config = {"name": "mm", "kernel": "matmul", "signature": {"a": "*fp16", "M": "i32"}, "constexprs": {"BM": 64},
              "num_warps": 4, "num_stages": 3, "archs": ["sm90"]}  # fmt: skip

    def one(rng):
        case = mutate_value(json.loads(json.dumps(config)), rng)
        return (lambda: check_config(case, 0)), case

    seen = _run(count(20000), 15, one)
    assert seen["ok"] > 500 and seen["refused"] > 5000, seen


def test_baseline_files(tmp_path):
    """A baseline file read back (``--baseline``): its text or its values mutated; every case is a
    mapping of keys to whole wavefront counts or a refusal naming the field."""
    good = json.dumps({"schema": 1, "accesses": {"mm@sm90 a:A ttg.local_load in loop #0": 512, "k": 0}})
    path = tmp_path / "baseline.json"

    def one(rng):
        text = mutate(good, rng, rng.choice([1, 2])) if rng.random() < 0.5 else None
        if text is None:
            with contextlib.suppress(RecursionError):
                text = json.dumps(mutate_value(json.loads(good), rng))
        text = text if text is not None else good

        def call():
            path.write_text(text, errors="surrogatepass")
            got = load_baseline(str(path))
            assert all(type(v) is int and v >= 0 for v in got.values()), got

        return call, text[:300]

    seen = _run(count(3000), 22, one)
    assert seen["ok"] > 100 and seen["refused"] > 1000, seen


def test_stored_results(tmp_path):
    """Mutated stored files: each is the artifact that was written, or refused (never another one
    read back as a result, never a crash)."""
    store = ResultStore(tmp_path, secret=b"f" * 32)
    key = "ab" * 32
    art = Artifact(
        config="k", arch="sm90", ttgir=(ROOT / "verifier" / "triton" / "sample.ttgir").read_text(), ptx=""
    )
    store.save(key, art)
    path = tmp_path / key[:2] / f"{key}.json"
    good = path.read_text()

    def one(rng):
        text = mutate(good, rng, rng.choice([1, 1, 2, 3]))
        if rng.random() < 0.4:
            with contextlib.suppress(RecursionError):  # a value too deep to write: the text mutation's job
                text = json.dumps(mutate_value(json.loads(good), rng))

        def call():
            path.write_text(text, errors="surrogatepass")
            got, why = store.check(key)
            assert got is None or got == art, "a changed file read back as another artifact"
            if why is not None:
                raise InputError("store", "entry", why)

        return call, text[:300]

    seen = _run(count(1500), 16, one)
    assert seen["refused"] > 1000, seen


def test_workbench_headers():
    """The header checks of the workbench's requests (duplicate, foreign or odd Host, Origin and
    token), called as the server calls them."""
    from email.message import Message

    from bankproof.verifier.web import server as serve

    class Fake(serve.Handler):
        def __init__(self, headers):
            self.headers, self.sent = headers, []
            self.server = type("S", (), {"server_address": ("127.0.0.1", 8000)})()
            self.token = "t0k"

        def _json(self, code, value):
            self.sent.append(code)

    names = ["Host", "Origin", "X-Bankproof-Token", "Content-Type", "Content-Length", "host", "HOST"]
    values = ["127.0.0.1:8000", "localhost:8000", "http://127.0.0.1:8000", "t0k", "evil.example", "", "\x00",
              "127.0.0.1:8000\r\nX: y", "a" * 5000]  # fmt: skip

    def one(rng):
        m = Message()
        for _ in range(rng.randrange(0, 6)):
            m[rng.choice(names)] = rng.choice(values)
        h = Fake(m)

        def call():
            refused = h._refused(api=rng.random() < 0.5)
            assert refused == bool(h.sent) and all(c == 403 for c in h.sent)
            if refused:
                raise InputError("workbench", "headers", "forbidden")

        return call, m.items()

    seen = _run(count(6000), 17, one)
    assert seen["refused"] > 3000 and seen["ok"] > 5, seen


def test_padded_cute_layouts_releases_and_partial_specs():
    """CuTe strides that skip elements, the spec's ``cutlass`` release and an access naming an atom
    bankproof cannot read (answered in part): mutated, through ``verify`` of the whole spec."""
    layouts = {"(32,128):(132,1)": [32, 128], "(32,32):(1,36)": [32, 32], "((8,4),64):((64,520),1)": [32, 64],
               "Sw<3,4,3> o (32,64):(64,1)": [32, 64]}  # fmt: skip
    atoms = ["DefaultCopy", "AutoVectorizingCopy", "Copy_Atom<AutoVectorizingCopyWithAssumedAlignment<64>, half_t>",
             "SM100_TMEM_LOAD_32dp32b1x", "UniversalCopy<uint32_t>"]  # fmt: skip
    releases = ["3.4", "3.5.1", "4.7.0", "v3.0.0", "2.11", None]

    def one(rng):
        layout = rng.choice(sorted(layouts))
        spec = {"shape": layouts[layout], "dtype": rng.choice(["f16", "half_t", "f32"]),
                "memory": {"cute": mutate(layout, rng, rng.choice([0, 0, 1, 2]))},
                "access": [{"name": "c", "kind": rng.choice(["store", "load"]),
                            "layout": {"cute_copy": {"atom": mutate(rng.choice(atoms), rng, rng.choice([0, 0, 1])),
                                                     "thr": "(32,1):(1,0)", "val": "(1,4)"}}},
                           {"name": "m", "kind": "load",
                            "layout": {"cute_mma": {"atom": rng.choice(["SM61_DP4A", "SM80_16x8x8_F16F16F16F16_TN"]),
                                                    "operand": "A"}}}]}  # fmt: skip
        release = rng.choice(releases)
        if release is not None:
            spec["cutlass"] = mutate(release, rng, rng.choice([0, 0, 1]))
        if rng.random() < 0.2:
            spec = mutate_value(spec, rng)
        return (lambda: bankproof.verify(spec=spec, engines="enum")), spec

    seen = _run(count(1500), 18, one)
    assert seen["ok"] > 100 and seen["refused"] > 300, seen


def test_trip_counts_and_buffer_fills_given_to_the_ledger():
    """``--arg trips_L<line>=N`` and ``--arg fill_<ptr>=N`` on a kernel with a loop bound loaded from
    memory: mutated names and values answer or are refused naming ``--arg``."""
    data = ROOT / "tests" / "data" / "control_flow"
    files = [str(data / "loaded_loop.ttgir"), "--ptx", str(data / "loaded_loop.ptx")]
    items = ["trips_L25=3", "fill_n_ptr=192", "trips_L26=1", "fill_x_ptr=0", "K=4", "trips_L25=0"]

    def one(rng):
        argv = ["triton", "scan", *files, "--json"]
        for _ in range(rng.choice([1, 1, 2])):
            argv += ["--arg", mutate(rng.choice(items), rng, rng.choice([0, 1, 1, 2]))]
        return _command(argv), argv

    seen = _run(count(400), 19, one)
    assert seen["ok"] > 40 and seen["refused"] > 100, seen


def test_open_argument_ranges():
    """``kernel --open NAME=LO..HI[:STEP]`` (the API's ``open_arg``) on a PTX kernel whose shared
    address is ``tid * stride``: mutated ranges answer (each value run) or are refused."""
    ptx = (
        ".visible .entry k(.param .u32 stride) {\n .shared .align 4 .b8 buf[16384];\n"
        " ld.param.u32 %r9, [stride];\n mov.u32 %r1, %tid.x;\n mul.lo.s32 %r2, %r1, %r9;\n"
        " shl.b32 %r3, %r2, 2;\n mov.u32 %r4, buf;\n add.s32 %r5, %r4, %r3;\n ld.shared.u32 %r6, [%r5];\n}"
    )
    texts = ["stride=1..8", "stride=0..4:2", "stride=3..3", "0=1..2"]

    def one(rng):
        case = mutate(rng.choice(texts), rng, rng.choice([0, 1, 1, 2]))
        return (lambda: bankproof.kernel_open(ptx, case, block=32, time_limit=5)), case

    seen = _run(count(300), 20, one)
    assert seen["ok"] > 20 and seen["refused"] > 100, seen


def test_many_memory_layouts():
    """``verify_many``: lists of memory layouts (notation texts, offset bases, mixtures) mutated
    in their texts, their numbers and their types, with huge, empty and wrongly typed lists; each
    answers or is refused naming ``memories`` or the field."""
    rows = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]}>"
    good = ["16*m + n", "16*m + (n ^ (4*(m % 4)))", "Swizzle<2,2,2> o (8,16):(16,1)",
            {"offset": [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0], [4, 0]]}]  # fmt: skip

    def one(rng):
        pick = rng.random()
        if pick < 0.5:
            case = [mutate(g, rng, rng.choice([1, 2])) if isinstance(g, str) else mutate_value(g, rng)
                    for g in rng.sample(good, rng.randint(1, 4))]  # fmt: skip
        elif pick < 0.8:
            case = mutate_value(list(good), rng)
        else:
            case = rng.choice([[], "16*m + n", None, 7, [None], good * 3, [good[0]] * 300])
        return (lambda: bankproof.verify_many(case, load=rows, shape=(8, 16), dtype="f32")), case

    seen = _run(count(300), 21, one)
    assert seen["ok"] > 10 and seen["refused"] > 100, seen


def test_the_fuzzers_run_fifty_thousand_cases_in_a_minute():
    """The budget ``make test`` holds every fuzzer of the project to: the fixed-seed counts above and
    those of tests/test_fuzz_entry_points.py and tests/test_fuzz.py add up to at least 50,000."""
    import re

    total = sum(int(n) for f in ("test_fuzz_entry_points.py", "test_fuzz_newer_surfaces.py")
                for n in re.findall(r"count\((\d+)\)", (ROOT / "tests" / f).read_text()))  # fmt: skip
    assert total >= 50_000, total
