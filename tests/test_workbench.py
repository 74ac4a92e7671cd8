"""The workbench (``bankproof serve``): the toggle grid's algebra, the answers, the HTTP server's
refusals, and the page itself in Debian's Chromium driven by Selenium (``make test`` installs
chromium, its driver and selenium; without them the browser test skips, or fails under
``BANKPROOF_REQUIRE_BROWSER=1``)."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import socket
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from bankproof.models.errors import InputError
from bankproof.verifier.web import server as serve
from bankproof.verifier.web import workbench
from hypothesis import given, settings
from hypothesis import strategies as st

import bankproof as bp
from tests.browser import chromium, decode_png

ROOT = Path(__file__).resolve().parents[1]
ROWS = workbench.SEED["accesses"][0]["layout"]
COLS = json.loads(workbench.SEED["accesses"][1]["layout"])
IDENTITY = [[1 if i == j else 0 for j in range(5)] for i in range(4)]
SHIFTED = [[1 if j == i + 1 else 0 for j in range(5)] for i in range(4)]
SEED_TABLE = {"unswizzled": ([[0] * 5] * 4, 16), "XOR m": (IDENTITY, 2), "XOR 2m": (SHIFTED, 1)}


def seed_bases(grid: list[list[int]]) -> list[list[int]]:
    """Seed 000's meaning of a grid, computed directly: element (m, n) lives at offset
    ``32*m + (n ^ g(m))`` with bank bit j of g(m) the XOR of the m bits whose row has a 1 in column j;
    returns the offset -> (m, n) bases."""
    where = {}
    for m in range(16):
        g = sum(((bin(m & sum(grid[i][j] << i for i in range(4))).count("1") & 1) << j) for j in range(5))
        for n in range(32):
            where[32 * m + (n ^ g)] = [m, n]
    return [where[1 << k] for k in range(9)]


def expected(grid: list[list[int]]) -> dict[str, tuple[int, int]]:
    accesses = [bp.Access("store", ROWS, "store"), bp.Access("load", COLS, "read")]
    r = bp.verify(seed_bases(grid), accesses=accesses, shape=(16, 32), dtype="f32", engines="enum")
    return {a.name: (a.wavefronts, a.max_per_instruction) for a in r.accesses}


# ----- the grid's algebra ----------------------------------------------------------------------
def test_the_seeds_table_by_grid():
    for name, (grid, per_instruction) in SEED_TABLE.items():
        r = workbench.evaluate({**workbench.SEED, "grid": grid})
        read = r["accesses"][1]
        assert read["max_per_instruction"] == per_instruction, name
        assert read["algebra"]["per_instruction"] == per_instruction, name
        assert {a["name"]: (a["wavefronts"], a["max_per_instruction"]) for a in r["accesses"]} == expected(
            grid
        )
    assert workbench.evaluate({**workbench.SEED, "grid": SHIFTED})["formula"] == "32*m + (n ^ (2*m))"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 1), min_size=5, max_size=5), min_size=4, max_size=4))
def test_every_grid_means_what_seed_000_says(grid):
    r = workbench.evaluate({**workbench.SEED, "grid": grid})
    assert r["grid"]["cells"] == grid
    assert {a["name"]: (a["wavefronts"], a["max_per_instruction"]) for a in r["accesses"]} == expected(grid)
    assert sorted(map(tuple, r["offset_bases"])) == sorted(map(tuple, seed_bases(grid)))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_any_loaded_layout_decomposes_into_base_and_grid(seed):
    """Decomposing a random invertible layout and rebuilding it with its own grid gives it back; a
    zero grid gives the base, whose segment columns are reduced against the bank columns."""
    rng = random.Random(seed)
    n = rng.randint(3, 10)
    roles = workbench.offset_roles(rng.choice([8, 16, 32]), n)
    cols = [1 << k for k in range(n)]
    for _ in range(3 * n):  # random invertible: column operations
        i, j = rng.sample(range(n), 2)
        cols[i] ^= cols[j]
    base, grid = workbench.decompose(cols, roles)
    assert workbench.with_grid(cols, roles, grid) == cols
    zero = workbench.with_grid(cols, roles, [[0] * len(grid[0]) for _ in grid] if grid and grid[0] else grid)
    assert [c for c, r in zip(zero, roles) if r == "segment"] == base
    assert workbench.decompose(zero, roles)[1] == [[0] * len(g) for g in grid]


@pytest.mark.parametrize(
    "change, message",
    [
        ({"grid": [[0] * 5] * 3}, "workbench: grid must be 4 rows of 5 zeros and ones"),
        ({"grid": [[2] * 5] * 4}, "workbench: grid must be 4 rows"),
        ({"memory": "32*m + (n ^ m"}, "formula"),
        ({"memory": ""}, "workbench: memory must be a non-empty string"),
        ({"shape": "16x"}, "shape: value must look like 16x32"),
        ({"accesses": []}, "workbench: accesses must list 1 to 8 accesses"),
        ({"instruction": 99}, "show: instruction must be in \\[0, 16\\)"),
        ({"evil": 1}, "workbench: evil is not a field"),
        ({"memory": '{"offset": [[0, 1]'}, "workbench: memory is not valid JSON"),
    ],
)
def test_bad_requests_name_the_field(change, message):
    with pytest.raises(InputError, match=message):
        workbench.evaluate({**workbench.SEED, **change})


def _instr(instr: str) -> dict:
    return {**workbench.SEED, "accesses": [{**a, "instr": instr} for a in workbench.SEED["accesses"]]}


def test_an_instruction_preference_list_takes_the_first_deliverable():
    """A TTGIR buffer's accesses load into the page with Triton's preference list: the seed's
    16x32 f32 row store takes stmatrix (as Triton 3.9.0 emits it), its column read the plain load."""
    r = workbench.evaluate(_instr("ldsm.x4,stsm.x4,auto"))
    assert [a["short"] for a in r["accesses"]] == ["stsm.x4", "ld32"]
    with pytest.raises(InputError, match="instr"):
        workbench.evaluate(_instr("bogus,ld.nothing"))
    with pytest.raises(InputError, match="workbench: instr lists at most 16 instructions"):
        workbench.evaluate(_instr(",".join(["auto"] * 17)))


def test_slow_calls_answer():
    synth = workbench.synth({**workbench.SEED, "timeout": 5})
    assert synth["result"]["synth"]["optimality"]["proof"]["status"] == "proved"
    assert workbench.explain(workbench.SEED)["text"].startswith("bankproof explain: 16x32 f32")
    proof = workbench.prove({**workbench.SEED, "grid": SHIFTED, "timeout": 10})["result"]
    assert proof["verdict"] == "proved" and [a["wavefronts"] for a in proof["accesses"]] == [16, 16]
    assert workbench.export({**workbench.SEED, "grid": IDENTITY})["notations"]["formula"] == "32*m + (n ^ m)"


# ----- the server --------------------------------------------------------------------------------
TOKEN: dict[str, str] = {}  # server url -> its token


@pytest.fixture
def server():
    srv = serve.make_server(None)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    TOKEN[serve.url(srv)] = serve.token(srv)
    yield serve.url(srv)
    srv.shutdown()
    srv.server_close()


def _post(url: str, body: bytes, headers: dict | None = None, method: str = "POST") -> tuple[int, dict]:
    base = url.split("api/")[0]
    sent = {"Content-Type": "application/json", "X-Bankproof-Token": TOKEN.get(base, "")}
    sent = {k: v for k, v in {**sent, **(headers or {})}.items() if v is not None}
    req = urllib.request.Request(url, data=body if method == "POST" else None, headers=sent, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@pytest.mark.slow
def test_server_refuses_bad_requests_and_keeps_serving(server):
    assert serve.url(serve.make_server(None)).startswith("http://127.0.0.1:")
    assert _post(server + "api/evaluate", b"{not json") == (
        400,
        {"ok": False, "error": "workbench: request is not JSON"},
    )
    code, body = _post(server + "api/evaluate", b"x" * (serve.MAX_BODY + 1))
    assert code == 413 and "65536 bytes" in body["error"]
    assert _post(server + "api/nothing", b"{}")[0] == 404
    code, body = _post(
        server + "api/evaluate", json.dumps({**workbench.SEED, "memory": "#ttg.nope<{}>"}).encode()
    )
    assert code == 400 and body["error"].startswith("triton: attribute kind must be one of")
    for path in ("../README.md", "%2e%2e/README.md", "app.py"):
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(server + path, timeout=10)
    code, body = _post(server + "api/evaluate", json.dumps(workbench.SEED).encode())
    assert code == 200 and [a["wavefronts"] for a in body["accesses"]] == [16, 256]
    page = urllib.request.urlopen(server, timeout=10).read().decode()
    assert '<script src="/app.js">' in page and "http" not in page.replace("http-equiv", "")


def _raw(server: str, request: bytes, wait: float = 0.0) -> tuple[int, bytes]:
    """Send ``request`` bytes as they are (a raw HTTP client: any Host, any Origin) and read the
    answer's status line; ``wait`` seconds before sending the rest (a slow client)."""
    host, port = server.removeprefix("http://").rstrip("/").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as s:
        head, _, rest = request.partition(b"\r\n\r\n")
        s.sendall(head + b"\r\n\r\n")
        time.sleep(wait)
        with contextlib.suppress(OSError):
            s.sendall(rest)
        data = b""
        with contextlib.suppress(OSError):
            while chunk := s.recv(65536):
                data += chunk
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
    return status, data.partition(b"\r\n\r\n")[2]


@pytest.mark.slow
def test_the_workbench_answers_only_its_own_page(server):
    """A page of another site cannot drive the workbench: a text/plain POST (a CORS simple request,
    no preflight), a foreign Origin, a foreign Host (DNS rebinding), a missing or wrong token, an
    oversized body and a client that stalls mid-body are all refused; the server keeps serving."""
    port = server.rstrip("/").rsplit(":", 1)[1]
    seed = json.dumps(workbench.SEED).encode()
    good = {"Content-Type": "application/json"}
    assert _post(server + "api/evaluate", seed, {"Content-Type": "text/plain"})[0] == 415
    code, body = _post(server + "api/evaluate", seed, {**good, "Origin": "http://evil.example"})
    assert code == 403 and "another site" in body["error"]
    assert _post(server + "api/evaluate", seed, {**good, "X-Bankproof-Token": None})[0] == 403
    assert _post(server + "api/evaluate", seed, {**good, "X-Bankproof-Token": "guess"})[0] == 403
    assert _post(server + "api/start", b"", {"X-Bankproof-Token": None}, method="GET")[0] == 403
    token = TOKEN[server].encode()
    rebind = (
        b"GET /api/start HTTP/1.1\r\nHost: evil.example:" + port.encode() + b"\r\nX-Bankproof-Token: " + token
    )
    code, body = _raw(server, rebind + b"\r\nConnection: close\r\n\r\n")
    assert code == 403 and b"Host" in body
    assert _raw(server, b"GET / HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")[0] == 403
    big = b"x" * (serve.MAX_BODY + 1)
    assert _post(server + "api/evaluate", big)[0] == 413
    slow = (
        b"POST /api/evaluate HTTP/1.1\r\nHost: 127.0.0.1:"
        + port.encode()
        + b"\r\nContent-Type: application/json"
        b"\r\nX-Bankproof-Token: "
        + token
        + b"\r\nContent-Length: "
        + str(len(seed)).encode()
        + b"\r\n\r\n"
        + seed
    )
    t = time.perf_counter()
    assert _raw(server, slow, wait=serve.READ_TIMEOUT_S + 2)[0] == 0  # dropped, no answer
    assert time.perf_counter() - t < serve.READ_TIMEOUT_S + 10
    code, body = _post(server + "api/evaluate", seed)  # the page's own calls still work
    assert code == 200 and [a["wavefronts"] for a in body["accesses"]] == [16, 256]
    page = urllib.request.urlopen(server, timeout=10).read().decode()
    assert f'name="bankproof-token" content="{TOKEN[server]}"' in page


@pytest.mark.slow
def test_serve_listens_on_loopback_only_and_names_the_host_flag(capsys):
    from bankproof.verifier.cli.main import main

    assert main(["serve", "--host", "0.0.0.0"]) == 2
    assert (
        "serve: --host must be a loopback address (127.0.0.1, localhost, ::1), got 0.0.0.0"
        in capsys.readouterr().err
    )
    assert main(["serve", "--port", "70000"]) == 2 and "--port" in capsys.readouterr().err
    try:
        srv = serve.make_server(None, "::1", 0)
    except InputError:
        pytest.skip("no IPv6 loopback on this machine")
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        url = serve.url(srv)
        assert url.startswith("http://[::1]:")
        TOKEN[url] = serve.token(srv)
        assert _post(url + "api/evaluate", json.dumps(workbench.SEED).encode())[0] == 200
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.mark.slow
def test_concurrent_proofs_are_serialized_and_stale_ones_dropped(server):
    """Z3's Python API shares one context: two proofs in two threads once crashed the process.
    Eight at once: each answered, proved, or dropped as superseded; the newest always runs."""
    body = json.dumps({**workbench.SEED, "grid": SHIFTED, "timeout": 10}).encode()
    answers: list = [None] * 8

    def ask(k):
        answers[k] = _post(server + "api/prove", body)

    threads = [threading.Thread(target=ask, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    codes = sorted(code for code, _ in answers)
    assert set(codes) <= {200, 409} and 200 in codes
    assert all(b["result"]["verdict"] == "proved" for code, b in answers if code == 200)
    assert all(b["error"] == "superseded by a newer prove call" for code, b in answers if code == 409)
    assert _post(server + "api/evaluate", json.dumps(workbench.SEED).encode())[0] == 200


@pytest.mark.parametrize(
    "example", sorted(p.name for p in (ROOT / "examples").glob("*.toml") if "amd_" not in p.name)
)
def test_every_example_opens_with_its_verified_counts(example):
    """A spec file opens in the workbench as written and counts what ``verify`` counts (AMD specs
    are refused: the workbench models NVIDIA only so far)."""
    path = str(ROOT / "examples" / example)
    answer = workbench.evaluate(serve.start_state(path)["problem"])
    want = bp.verify(spec=path, engines="enum")
    assert [a["wavefronts"] for a in answer["accesses"]] == [a.wavefronts for a in want.accesses]


def test_amd_specs_are_refused_by_name():
    problem = serve.start_state(str(ROOT / "examples" / "amd_mi300_gemm_a_plain.toml"))["problem"]
    with pytest.raises(InputError, match="workbench: arch is an AMD model"):
        workbench.evaluate(problem)


def test_serve_command_refuses_bad_arguments(capsys):
    from bankproof.verifier.cli.main import main

    assert main(["serve", str(ROOT / "no-such.toml")]) == 2
    assert "serve: SPEC cannot be read (No such file or directory)" in capsys.readouterr().err
    assert main(["serve", "--port", "70000"]) == 2
    assert "serve: --port must be between 0 and 65535, got 70000" in capsys.readouterr().err


def test_start_states_from_files():
    spec = serve.start_state(str(ROOT / "examples" / "transpose_16x32_xor_m.toml"))
    r = workbench.evaluate(spec["problem"])
    assert r["grid"]["cells"] == IDENTITY and [a["wavefronts"] for a in r["accesses"]] == [16, 32]
    ttgir = serve.start_state(str(ROOT / "verifier" / "triton" / "sample.ttgir"))
    (buf,) = ttgir["ttgir"]
    assert (buf["wavefronts"], buf["optimal_wavefronts"]) == (272, 32)
    assert sum(a["wavefronts"] for a in workbench.evaluate(buf["problem"])["accesses"]) == 272
    better = workbench.evaluate({**buf["problem"], "memory": buf["better_layout"]})
    assert sum(a["wavefronts"] for a in better["accesses"]) == 32
    with pytest.raises(InputError, match="serve: SPEC cannot be read"):
        serve.start_state(str(ROOT / "no-such.toml"))


# ----- the page in a real browser ----------------------------------------------------------------
def _driver():
    exe = chromium()
    driver_path = shutil.which("chromedriver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        driver_path = None
    if driver_path is None:
        if os.environ.get("BANKPROOF_REQUIRE_BROWSER") == "1":
            pytest.fail("selenium or chromedriver is missing (make test installs both)")
        pytest.skip("selenium or chromedriver is missing (make test installs both)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = exe
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,2000"):
        opts.add_argument(flag)
    return webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)


class Page:
    """The workbench page: clicks that wait for the answer, and what it displays."""

    def __init__(self, driver):
        self.d = driver

    def seq(self) -> int:
        return int(self.d.find_element("tag name", "body").get_attribute("data-seq"))

    def wait(self, before: int) -> None:
        from selenium.webdriver.support.ui import WebDriverWait

        def done(d):
            body = d.find_element("tag name", "body")
            return int(body.get_attribute("data-seq")) > before and body.get_attribute("data-busy") == "0"

        WebDriverWait(self.d, 30).until(done)

    def click(self, selector: str) -> None:
        before = self.seq()
        self.d.find_element("css selector", selector).click()
        self.wait(before)

    def grid(self) -> list[list[int]]:
        return json.loads(self.d.find_element("id", "grid").get_attribute("data-cells"))

    def set_grid(self, target: list[list[int]]) -> None:
        now = self.grid()
        for i, row in enumerate(target):
            for j, v in enumerate(row):
                if now[i][j] != v:
                    self.click(f"#grid button[data-row='{i}'][data-col='{j}']")
        assert self.grid() == target

    def counts(self) -> dict[str, tuple[int, int]]:
        out = {}
        for tr in self.d.find_elements("css selector", "#accesses tr[data-access]"):
            wf = tr.find_element("css selector", ".wavefronts").text
            per = tr.find_element("css selector", ".per-instruction").text
            out[tr.get_attribute("data-access")] = (int(wf), int(per))
        return out

    def algebra(self) -> dict[str, tuple[int, int]]:
        out = {}
        for div in self.d.find_elements("css selector", "#algebra-body .alg"):
            count = div.find_element("css selector", ".alg-count").get_attribute("textContent")
            enum = div.find_element("css selector", ".enum-count").get_attribute("textContent")
            out[div.get_attribute("data-access")] = (int(count), int(enum))
        return out

    def paste_memory(self, text: str) -> None:
        box = self.d.find_element("id", "memory")
        self.d.execute_script("arguments[0].value = arguments[1];", box, text)
        self.click("#load")


@pytest.mark.browser
def test_the_page_in_chromium(server, tmp_path):
    driver = _driver()
    try:
        driver.get(server)
        page = Page(driver)
        page.wait(0)
        assert page.grid() == [[0] * 5] * 4
        for name, (grid, per_instruction) in SEED_TABLE.items():  # the seed's table, by toggling
            page.set_grid(grid)
            assert page.counts()["read"][1] == per_instruction, name
        rng = random.Random(20261123)
        states = 0
        grid = page.grid()
        while states < 50:  # a random walk: 1 to 3 toggles per state
            for _ in range(rng.randint(1, 3)):
                i, j = rng.randrange(4), rng.randrange(5)
                grid[i][j] ^= 1
            page.set_grid(grid)
            shown = page.counts()
            assert shown == expected(grid), grid
            assert all(count == enum for count, enum in page.algebra().values()), page.algebra()
            assert page.algebra()["read"][0] == shown["read"][1]
            states += 1
        from selenium.webdriver.support.ui import WebDriverWait

        def proved_now(d):  # the background Z3 proof of the last state
            status = d.find_element("id", "z3-status")
            return status.get_attribute("data-grid") == json.dumps(grid, separators=(",", ":")) and status

        status = WebDriverWait(driver, 60).until(proved_now)
        verdicts = json.loads(status.get_attribute("data-accesses"))
        want = {name: "proved" if per == 1 else "refuted" for name, (_, per) in expected(grid).items()}
        assert verdicts == want and status.get_attribute("data-verdict") in ("proved", "refuted")
        png = driver.get_screenshot_as_png()
        (tmp_path / "workbench.png").write_bytes(png)
        img = decode_png(png)[..., :3]
        assert img.std() > 20 and (img.min(axis=-1) < 128).mean() > 0.01  # not blank: text and colour
        page.paste_memory("32*m + (n ^ m")  # malformed: an error shows, the server goes on
        error = driver.find_element("id", "error")
        assert error.is_displayed() and "formula" in error.text
        page.paste_memory("32*m + (n ^ (2*m))")
        assert not driver.find_element("id", "error").is_displayed()
        assert page.counts()["read"] == (16, 1)
        assert page.grid() == SHIFTED
        before = page.seq()
        driver.find_element("id", "synth").click()
        WebDriverWait(driver, 60).until(
            lambda d: d.find_element("tag name", "body").get_attribute("data-action") == "done"
        )
        assert driver.find_element("id", "synth-status").text == "proved"
        assert page.seq() == before
    finally:
        driver.quit()


@pytest.mark.slow
def test_a_ttgir_buffer_loads_by_click(tmp_path):
    srv = serve.make_server(str(ROOT / "verifier" / "triton" / "sample.ttgir"))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    driver = _driver()
    try:
        driver.get(serve.url(srv))
        page = Page(driver)
        page.wait(0)
        assert sum(wf for wf, _ in page.counts().values()) == 272
        page.click("#buffers tr.buffer button")  # the scan's better layout
        assert sum(wf for wf, _ in page.counts().values()) == 32
        page.click("#buffers tr.buffer")
        assert sum(wf for wf, _ in page.counts().values()) == 272
    finally:
        driver.quit()
        srv.shutdown()
        srv.server_close()


VERDICT_WORDS = ("conflict-free", "conflict", "proved", "refuted", "wavefront", "Z3 and every engine")


@pytest.mark.slow
def test_a_rejected_input_leaves_no_verdict_of_the_previous_layout(server):
    """After a rejected paste, nothing the page shows outside the error belongs to the previous
    layout: not its counts, its toggles, its scope, its matrices, nor its Z3 verdict (a proof
    still running for it is dropped, not shown when it ends)."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver = _driver()
    try:
        driver.get(server)
        page = Page(driver)
        page.wait(0)
        WebDriverWait(driver, 60).until(
            lambda d: d.find_element("id", "z3-status").get_attribute("data-verdict")
        )
        assert page.counts() and "Z3 and every engine" in driver.find_element("id", "z3-status").text
        page.set_grid(
            [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]]
        )  # a proof is pending
        page.paste_memory("32*m + (n ^ m")  # rejected
        assert driver.find_element("id", "error").is_displayed()
        time.sleep(1.5)  # past the background proof's start: a stale one would have shown by now
        assert driver.find_element("tag name", "body").get_attribute("data-rejected") == "1"
        assert page.counts() == {}
        for section in ("verdicts", "toggles", "algebra", "scope", "matrices", "actions"):
            text = driver.find_element("id", section).text
            shown = [
                w
                for w in VERDICT_WORDS
                if w in text.replace("Wavefronts (enumeration, every instruction)", "")
            ]
            assert not shown, (section, shown, text[:300])
        assert driver.find_element("id", "grid").get_attribute("data-cells") in (None, "")
        page.paste_memory("32*m + (n ^ (2*m))")  # a valid input brings verdicts back
        assert driver.find_element("tag name", "body").get_attribute("data-rejected") == "0"
        assert page.counts()["read"] == (16, 1)
    finally:
        driver.quit()


@pytest.mark.browser
def test_in_chromium_only_the_pages_own_calls_are_answered(server):
    """From inside Chromium: the page works (it carries the token), while a text/plain POST (what a
    foreign page can send without a preflight) and a call without the token are refused."""
    driver = _driver()
    try:
        driver.get(server)
        page = Page(driver)
        page.wait(0)
        assert "read" in page.counts()  # the page's own calls answered
        probe = """
            const done = arguments[arguments.length - 1];
            const body = JSON.stringify({});
            const token = document.querySelector('meta[name="bankproof-token"]').content;
            Promise.all([
              fetch("/api/evaluate", {method: "POST", headers: {"Content-Type": "text/plain", "X-Bankproof-Token": token}, body}),
              fetch("/api/evaluate", {method: "POST", headers: {"Content-Type": "application/json"}, body}),
              fetch("/api/start"),
              fetch("/api/start", {headers: {"X-Bankproof-Token": token}}),
            ]).then(rs => done(rs.map(r => r.status)));
        """
        assert driver.execute_async_script(probe) == [415, 403, 403, 200]
    finally:
        driver.quit()


def test_a_request_too_large_for_the_workbench_is_refused_before_any_work():
    """A 2^24-element problem took 34 s per toggle; the workbench refuses it at once (400)."""
    req = {**workbench.SEED, "shape": "4096x4096", "memory": "4096*m + n"}
    t = time.perf_counter()
    with pytest.raises(InputError, match=r"workbench: shape has more than 2\^20 elements"):
        workbench.evaluate(req)
    assert time.perf_counter() - t < 1
    cute = {
        **workbench.SEED,
        "memory": "Sw<3,2,3> o (16,32):(32,1)",
        "units": "byte",
        "base_align": "9" * 5000,
    }
    with pytest.raises(InputError, match="base_align"):  # 5000 digits: once a 500 (int() refused them)
        workbench.evaluate(cute)


@pytest.mark.slow
def test_headers_sent_twice_and_a_trickling_client_are_refused(server):
    """Two Host or two Origin headers (the right one first) are refused; a client that sends its
    request a byte at a time is dropped at the request's deadline, not served after it."""
    port = server.rstrip("/").rsplit(":", 1)[1].encode()
    token = TOKEN[server].encode()
    head = b"GET /api/start HTTP/1.1\r\nHost: 127.0.0.1:" + port + b"\r\nX-Bankproof-Token: " + token
    code, body = _raw(server, head + b"\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
    assert code == 403 and b"Host more than once" in body
    origin = b"\r\nOrigin: http://127.0.0.1:" + port + b"\r\nOrigin: http://evil.example"
    code, body = _raw(server, head + origin + b"\r\nConnection: close\r\n\r\n")
    assert code == 403 and b"Origin more than once" in body
    request = head + b"\r\nConnection: close\r\n\r\n"
    host, p = server.removeprefix("http://").rstrip("/").rsplit(":", 1)
    t = time.perf_counter()
    got = b""
    with socket.create_connection((host, int(p)), timeout=30) as s:
        with contextlib.suppress(OSError):
            for byte in request:  # one byte every 0.25 s: 30+ s in all, every read well within its timeout
                s.sendall(bytes([byte]))
                time.sleep(0.25)
                if time.perf_counter() - t > serve.READ_TIMEOUT_S + 5:
                    break
        with contextlib.suppress(OSError):
            got = s.recv(65536)
    assert not got.startswith(b"HTTP/1.0 200") and time.perf_counter() - t < serve.READ_TIMEOUT_S + 8


def test_a_ttgir_opens_on_its_own_target(tmp_path):
    """A cuda:80 module opens on sm80 (where the model is assumed, as triton scan says), not sm90."""
    text = (ROOT / "verifier" / "triton" / "sample.ttgir").read_text()
    assert 'ttg.target = "cuda:90"' in text
    path = tmp_path / "k80.ttgir"
    path.write_text(text.replace('ttg.target = "cuda:90"', 'ttg.target = "cuda:80"'))
    (buf,) = serve.start_state(str(path))["ttgir"]
    assert buf["problem"]["arch"] == "sm80"
    answer = workbench.evaluate(buf["problem"])
    assert [a["rests_on"] for a in answer["accesses"]] == ["assumed", "assumed"]
    assert answer["accesses"][0]["short"] == "st32"  # stmatrix is sm90's: Triton's sm80 store is st
    (sm90,) = serve.start_state(str(ROOT / "verifier" / "triton" / "sample.ttgir"))["ttgir"]
    assert sm90["problem"]["arch"] == "sm90"
    answer = workbench.evaluate(sm90["problem"])
    assert [a["rests_on"] for a in answer["accesses"]] == ["measured", "measured"]
    assert answer["accesses"][0]["short"] == "stsm.x4"


@pytest.mark.parametrize("dtype", ["i8", "f16", "f32", "f64"])
def test_export_gives_the_cute_byte_form_that_reads_back(dtype):
    """A swizzled layout exports in CuTe's element form and in its byte-addressed print
    (``Sw<B,M+log2(bytes),S> o smem_ptr[Nb](unset) o ...``, GMMA's spelling), each read back to the
    same layout."""
    from bankproof.models.notation import parse_layout

    memory = "Sw<3,3,3> o (8,64):(64,1)" if dtype != "f64" else "Sw<2,1,3> o (8,32):(32,1)"
    shape = [8, 64] if dtype != "f64" else [8, 32]
    problem = {**workbench.SEED, "memory": memory, "shape": "x".join(map(str, shape)), "dtype": dtype,
               "accesses": [{"name": "r", "kind": "load", "layout": "#ttg.blocked<{sizePerThread = [1, 1], "
                             "threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>"}]}  # fmt: skip
    notations = workbench.export(problem)["notations"]
    want = parse_layout(memory, shape, dtype=dtype).layout
    bits = {"i8": 8, "f16": 16, "f32": 32, "f64": 64}[dtype]
    assert f"o smem_ptr[{bits}b](unset) o" in notations["cute_bytes"]
    assert parse_layout(notations["cute_bytes"], shape, dtype=dtype).layout == want
    assert parse_layout(notations["cute"], shape, dtype=dtype).layout == want
