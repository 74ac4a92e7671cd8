"""One fuzzer per entry point, mutating valid inputs (deep nesting, huge numbers, wrong types,
control characters, truncation): notations, spec files, the JSON lines of ``wavefronts``, whole
TTGIR files, Gluon objects, the API's arguments and the workbench's requests (its functions and
its HTTP server). Each case either answers (its text terminal-safe) or is refused with an
``InputError`` naming the field; see ``tests/fuzzing.py``. The seeds are fixed; the count per
entry point scales with ``BANKPROOF_FUZZ_SCALE`` (the documented long run uses 20)."""

from __future__ import annotations

import contextlib
import json
import random
import resource
import threading
import traceback
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
from bankproof.verifier.api.spec_file import spec_from_text
from bankproof.verifier.api.wavefronts import run_lines
from bankproof.verifier.web import server as serve
from bankproof.verifier.web import workbench

import bankproof
from tests.fuzzing import check, count, mutate, mutate_value, show

pytestmark = pytest.mark.fuzz

ROOT = Path(__file__).resolve().parent.parent
BLOCKED = (
    "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [2, 2], order = [1, 0]}>"
)
NOTATIONS = [
    (BLOCKED, "16x32"),
    ("#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 16, order = [1, 0]}>", "16x32"),
    ("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>", "64x64"),
    ("#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>", "32x32"),
    ("#ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], "
     "instrShape = [16, 8]}>, kWidth = 2}>", "32x32"),
    ("#ttg.slice<{dim = 1, parent = " + BLOCKED + "}>", "16"),
    ("#ttg.linear<{register = [[0, 1]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [0, 2]], warp = [], block = []}>",
     "16x4"),
    ("#ttg.padded_shared<[32:+4] {order = [1, 0], shape = [16, 32]}>", "16x32"),
    ("#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0], [2, 0]]}, alignment = 16>", "4x4"),
    ("#ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>", "64x64"),
    ("Sw<3,2,3> o (8,8):(1,8)", None),
    ("Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)", None),
    ("tile_to_shape(composition(Swizzle<3,3,3>{}, Layout<Shape<_8,_64>,Stride<_64,_1>>{}), "
     "make_shape(_128{}, _64{}))", None),
    ("make_layout(make_shape(Int<8>{}, _64{}), LayoutRight{})", None),
    ("32*m + (n ^ (2*m))", "16x32"),
    ('{"offset": [[0, 1], [0, 2], [1, 0], [2, 0]]}', "4x4"),
]  # fmt: skip


def _run(cases, seed: int, call) -> Counter:
    """Every case of one entry point; the distinct failures (exception type and where it was
    raised), each with its first input, fail the test together."""
    rng = random.Random(seed)
    seen: Counter = Counter()
    failures: dict[str, str] = {}
    for _ in range(cases):
        case = call(rng)
        try:
            seen[check(case[0], case[1])] += 1
        except Exception as e:  # noqa: BLE001 - collected, then reported together
            tb = traceback.extract_tb(e.__traceback__)[-1]
            key = f"{type(e).__name__} at {Path(tb.filename).name}:{tb.lineno}"
            failures.setdefault(key, f"{key}: {str(e)[:200]} <- {show(case[1])}")
    assert not failures, "\n".join(failures.values())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # bytes (Linux reports KiB)
    assert peak < 2 << 30, f"the process peaked at {peak >> 20} MiB"
    return seen


def test_notations(capsys):
    def one(rng):
        text, shape = rng.choice(NOTATIONS)
        text = mutate(text, rng, rng.choice([0, 1, 1, 2, 3]))
        shape = mutate(shape, rng, 1) if shape and rng.random() < 0.2 else shape
        dtype = rng.choice(["f16", "f32", "i8", None, "f4"])
        return (lambda: bankproof.layout(text, shape=shape, dtype=dtype)), (text, shape, dtype)

    seen = _run(count(10000), 1, one)
    assert seen["ok"] > 200 and seen["refused"] > 1000, seen


SPECS = sorted((ROOT / "examples").glob("*.toml"))


def test_spec_files():
    texts = [p.read_text() for p in SPECS]

    def one(rng):
        text = mutate(rng.choice(texts), rng, rng.choice([0, 1, 1, 2]))

        def call():
            spec = spec_from_text(text)
            return bankproof.verify(spec=spec, engines="enum")

        return call, text

    seen = _run(count(1500), 2, one)
    assert seen["ok"] > 30 and seen["refused"] > 200, seen


def test_wavefronts_lines():
    lines = [
        json.dumps({"instr": i, "byte_offsets": [4 * k for k in range(32)]})
        for i in ("ld32", "st128", "ldsm.x4", "atom.add.u32")
    ]
    lines.append(
        json.dumps({"arch": "gfx942", "instr": "ds_read_b128", "byte_offsets": [16 * k for k in range(64)]})
    )

    def one(rng):
        line = rng.choice(lines)
        if rng.random() < 0.5:
            line = mutate(line, rng, rng.randint(1, 3))
        else:
            with contextlib.suppress(RecursionError):  # a value too deep to write: the text mutation's job
                line = json.dumps(mutate_value(json.loads(line), rng))
        return (lambda: run_lines([line])), line

    seen = _run(count(3000), 3, one)
    assert seen["ok"] > 30 and seen["refused"] > 1000, seen


TTGIR = [ROOT / "verifier" / "triton" / "sample.ttgir", *sorted((ROOT / "tests" / "data").glob("*.ttgir"))]


def test_ttgir_files():
    texts = [p.read_text() for p in TTGIR]

    def one(rng):
        text = mutate(rng.choice(texts), rng, rng.choice([0, 1, 1, 2, 3]))
        return (lambda: bankproof.scan_ttgir(text, path=f"k{rng.random():.3f}.ttgir")), text[:200]

    seen = _run(count(2000), 4, one)
    assert seen["ok"] > 200, seen


def _gluon(name: str, fields: dict):
    cls = type(name, (), {"__init__": lambda self, **kw: self.__dict__.update(kw)})
    cls.__module__ = "triton.experimental.gluon.language._layouts"
    return cls(**fields)


GLUON = [
    ("BlockedLayout", {"size_per_thread": [1, 4], "threads_per_warp": [4, 8], "warps_per_cta": [2, 2],
                       "order": [1, 0], "cga_layout": []}),
    ("SwizzledSharedLayout", {"vec": 2, "per_phase": 1, "max_phase": 16, "order": [1, 0], "cga_layout": []}),
    ("NVMMASharedLayout", {"swizzle_byte_width": 128, "transposed": False, "element_bitwidth": 16,
                           "fp4_padded": False, "rank": 2, "cga_layout": []}),
    ("DistributedLinearLayout", {"reg_bases": [[0, 1]], "lane_bases": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 2]],
                                 "warp_bases": [], "block_bases": [], "shape": [16, 4]}),
]  # fmt: skip


def test_gluon_objects():
    class Raises:
        def __getattr__(self, name):
            raise RuntimeError("a property of the user's object failed")

    def one(rng):
        name, fields = rng.choice(GLUON)
        fields = mutate_value(fields, rng)
        obj = _gluon(name, fields) if isinstance(fields, dict) else Raises()
        shape = rng.choice(["16x32", "16x4", "64x64"])
        return (lambda: bankproof.layout(obj, shape=shape, dtype="f16")), (name, fields)

    seen = _run(count(2000), 5, one)
    assert seen["ok"] > 50 and seen["refused"] > 500, seen


API = {
    "verify": dict(memory="32*m + (n ^ m)", load=BLOCKED, shape="16x32", dtype="f16", engines="enum"),
    "show": dict(memory="32*m + (n ^ m)", load=BLOCKED, shape="16x32", dtype="f16"),
    "synth": dict(store=BLOCKED, load=BLOCKED, shape="16x32", dtype="f16", engines="enum"),
    "layout": dict(notation="32*m + n", shape="16x32", dims=["m", "n"]),
    "wavefronts": dict(instr="ld32", byte_offsets=list(range(0, 128, 4))),
}


def test_api_arguments():
    def one(rng):
        name = rng.choice(sorted(API))
        args = mutate_value(API[name], rng)
        args = args if isinstance(args, dict) and set(args) == set(API[name]) else API[name]
        return (lambda: getattr(bankproof, name)(**args)), (name, args)

    seen = _run(count(1500), 6, one)
    assert seen["ok"] > 50 and seen["refused"] > 300, seen


def test_workbench_requests():
    def one(rng):
        req = mutate_value(workbench.SEED, rng)
        call = rng.choice([workbench.evaluate, workbench.export])
        return (lambda: call(req)), req

    seen = _run(count(2500), 7, one)
    assert seen["ok"] > 50 and seen["refused"] > 500, seen


@pytest.fixture
def server():
    srv = serve.make_server(None)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield serve.url(srv), serve.token(srv)
    srv.shutdown()
    srv.server_close()


def test_workbench_http(server):
    """Mutated bodies over HTTP: every answer is 200 or 4xx JSON, never a 500 or a dropped server."""
    url, token = server
    rng = random.Random(8)
    codes: Counter = Counter()
    for _ in range(count(300)):
        body = json.dumps(workbench.SEED)
        if rng.random() < 0.5:
            body = mutate(body, rng, rng.randint(1, 3))
        else:
            with contextlib.suppress(RecursionError):
                body = json.dumps(mutate_value(workbench.SEED, rng))
        body = body.encode("utf-8", "surrogatepass")
        path = rng.choice(["api/evaluate", "api/export", "api/evaluate?x=1", "api/nothing"])
        req = urllib.request.Request(url + path, data=body, headers={
            "Content-Type": "application/json", "X-Bankproof-Token": token})  # fmt: skip
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                code, answer = r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            code, answer = e.code, json.loads(e.read())
        assert code in (200, 400, 404, 413) and isinstance(answer, dict), (code, body[:300])
        codes[code] += 1
    assert codes[200] > 5 and codes[400] > 50, codes


AGREE = sorted((ROOT / "examples" / "engines").glob("*.toml"))


def test_agree_specs():
    """bankproof agree: every engines example mutated as TOML text and as values (wrong types, huge
    numbers, nesting); each answers or is refused naming the field."""
    from bankproof.verifier.api.spec_file import tomllib

    specs = [tomllib.loads(p.read_text()) for p in AGREE if "access" not in p.read_text()]

    def one(rng):
        data = mutate_value(rng.choice(specs), rng) if rng.random() < 0.7 else rng.choice(specs)
        if not isinstance(data, dict):
            data = {"writer": data}

        def call():
            return bankproof.agree(data.get("writer"), data.get("reader"), dtype=data.get("dtype", "f16"),
                                   base=data.get("base", 0), arch=data.get("arch", "sm90"), timeout=2)  # fmt: skip

        return call, data

    seen = _run(count(600), 9, one)
    assert seen["ok"] > 20 and seen["refused"] > 100, seen
