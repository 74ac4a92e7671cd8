"""``bankproof serve``: the workbench as a local web app, on the standard library's threading
HTTP server (loopback by default; the page and its script are files of this package, nothing is
fetched from elsewhere, so it works offline).

Routes: ``GET /`` (the page), ``GET /app.js`` and ``/app.css``, ``GET /api/start`` (the problem to
open: the seeds' 16x32 transpose, a spec given on the command line, or a TTGIR file's buffers),
``POST /api/evaluate`` (enumeration and algebra: every toggle), ``/api/export``, and the slow ones
``/api/prove``, ``/api/synth``, ``/api/explain`` (one at a time in a process, since Z3's Python
API shares one context between threads; each under a time limit; a call still waiting when a
newer one of its kind arrives is answered 409 "superseded" without running).
Bad input answers 400 with ``{"ok": false, "error": message}``; the server keeps running.

Trust: the server listens on a loopback address only, and answers only its own page. A request
whose ``Host`` is not the server's own loopback name (DNS rebinding) or whose ``Origin`` is another
site's is refused (403); every ``/api/`` call must carry the per-server token the page was served
with (``X-Bankproof-Token``; a page of another site cannot read it), and a POST must be
``application/json`` (a cross-site form or ``text/plain`` POST needs no preflight: 415). A
connection that does not send its request within :data:`READ_TIMEOUT_S` is closed.
Nothing is read but the file named on the command line (once, at start) and the package's own
three page files; nothing is written.

>>> initial = start_state(None)
>>> initial["problem"]["memory"], initial["ttgir"]
('32*m + n', None)
"""

from __future__ import annotations

import contextlib
import hmac
import json
import secrets
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bankproof.models import target
from bankproof.models.errors import InputError
from bankproof.models.files import TEXT_BYTES, json_value, read_text
from bankproof.verifier.api.problem import page_request
from bankproof.verifier.web import workbench

WEB = Path(__file__).with_name("static")
ASSETS = {"/": ("index.html", "text/html"), "/app.js": ("app.js", "text/javascript"),
          "/app.css": ("app.css", "text/css")}  # fmt: skip
FAST = {"evaluate": workbench.evaluate, "export": workbench.export}
SLOW = {"prove": workbench.prove, "synth": workbench.synth, "explain": workbench.explain}
MAX_BODY = 64 * 1024  # bytes of one request
READ_TIMEOUT_S = 10  # how long a connection may take to send its whole request
ONCE = ("Host", "Origin", "X-Bankproof-Token", "Content-Type", "Content-Length")  # sent twice: refused
LOOPBACK = ("127.0.0.1", "localhost", "::1")  # the addresses serve listens on
SLOW_WAIT_S = 120  # how long a slow call waits for the one running (each runs under its own limit)
Z3_LOCK = threading.Lock()  # Z3's Python API shares one context in a process: one slow call at a time


def _preference(a, b, rep) -> str:
    """The instruction a TTGIR access is counted with in the workbench: Triton 3.9.0's preference
    list (the first one the layout pair delivers, so that another shared layout gets the
    instruction Triton would pick for it), or the copy's own width."""
    from bankproof.models import dtypes
    from bankproof.verifier.triton.accesses import policy, sm_of

    if a.instr is None or "async_copy" in a.op:
        return a.instr or "auto"
    return ",".join(policy(a.kind, dtypes.bits(b.dtype), sm_of(rep.target), a.layout))


def _ttgir_buffers(path: str) -> list[dict]:
    """Each shared buffer of a TTGIR file as a loadable problem, with the scan's counts."""
    from bankproof.models.notation.mlir import split_aliases
    from bankproof.models.notation.triton import parse_triton
    from bankproof.verifier.triton.scan import scan_text

    text = read_text(path, TEXT_BYTES, "serve", "FILE")
    aliases, _ = split_aliases(text)

    def full(attr: str) -> str:
        return parse_triton(attr, aliases).text()

    rep = scan_text(text, path)
    arch = target.from_triton(rep.target).arch  # the module's own target, as triton scan counts it
    out = []
    for b in rep.buffers:
        accesses = [
            {"name": f"{a.kind}@{a.location.ttgir_line}", "kind": a.kind, "instr": _preference(a, b, rep),
             "layout": full(a.layout)}
            for a in b.accesses
        ]  # fmt: skip
        problem = {"memory": full(b.shared), "shape": "x".join(map(str, b.shape)), "dtype": b.dtype,
                   "arch": arch, "dims": "", "accesses": accesses}  # fmt: skip
        counts = {"buffer": b.buffer, "wavefronts": b.wavefronts, "optimal_wavefronts": b.optimal_wavefronts,
                  "better_layout": b.better_layout}  # fmt: skip
        out.append({**counts, "problem": problem})
    return out


def start_state(path: str | None) -> dict:
    """What the page opens on: ``{"problem", "ttgir", "source"}``."""
    if path is None:
        return {"problem": workbench.SEED, "ttgir": None, "source": "the seeds' 16x32 transpose"}
    if path.endswith(".ttgir") or path.endswith(".mlir"):
        buffers = _ttgir_buffers(path)
        if not buffers:
            raise InputError("serve", "FILE", "has no shared buffer with a checked access", path)
        return {"problem": buffers[0]["problem"], "ttgir": buffers, "source": path}
    return {"problem": page_request(path), "ttgir": None, "source": path}


class Handler(BaseHTTPRequestHandler):
    """One request: a page file, the start state, or one workbench call as JSON."""

    server_version = "bankproof"
    timeout = READ_TIMEOUT_S  # socket timeout: a stalled client is dropped
    token = ""
    state: dict = {}
    tickets: dict = {}
    tickets_lock = threading.Lock()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    def setup(self) -> None:
        """The request's deadline: the whole request (line, headers, body) must arrive within
        :data:`READ_TIMEOUT_S`, however slowly its bytes trickle in (the socket timeout is per read)."""
        super().setup()
        self.deadline = threading.Timer(READ_TIMEOUT_S, self._drop)
        self.deadline.daemon = True
        self.deadline.start()

    def _drop(self) -> None:
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def finish(self) -> None:
        self.deadline.cancel()
        with contextlib.suppress(OSError):
            super().finish()

    def _send(self, code: int, body: bytes, kind: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind + "; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        with contextlib.suppress(ConnectionError):  # the browser went away: nothing to answer
            self.wfile.write(body)

    def _json(self, code: int, value: dict) -> None:
        self._send(code, json.dumps(value).encode(), "application/json")

    def _refused(self, api: bool) -> bool:
        """Answer 403 (and say so) unless the request is this server's own page's: its Host one of
        the server's loopback names, its Origin (when sent) that page's, and for the API the token."""
        port = self.server.server_address[1]
        names = {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}
        why = ""
        twice = [h for h in ONCE if len(self.headers.get_all(h, [])) > 1]
        if twice:
            why = f"the request sends {twice[0]} more than once"
        elif self.headers.get("Host", "") not in names:
            why = "the Host is not this server's loopback address"
        elif self.headers.get("Origin") not in (None, *(f"http://{n}" for n in names)):
            why = "the request comes from another site (Origin)"
        elif api and not hmac.compare_digest(self.headers.get("X-Bankproof-Token", ""), self.token):
            why = "the request does not carry this server's token (X-Bankproof-Token)"
        if why:
            self._json(403, {"ok": False, "error": f"forbidden: {why}"})
        return bool(why)

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self.deadline.cancel()  # the request has arrived
        path = self.path.split("?")[0]
        if self._refused(api=path.startswith("/api/")):
            return
        if path == "/api/start":
            self._json(200, self.state)
        elif path in ASSETS:
            name, kind = ASSETS[path]
            body = (WEB / name).read_bytes()
            if name == "index.html":
                mark = b'name="bankproof-token" content="'
                body = body.replace(mark + b'"', mark + self.token.encode() + b'"')
            self._send(200, body, kind)
        else:
            self._json(404, {"ok": False, "error": f"no such page: {path[:80]}"})

    def do_POST(self) -> None:  # noqa: N802
        name = self.path.split("?")[0].removeprefix("/api/")
        if self._refused(api=True):
            return
        if self.headers.get("Content-Type", "").split(";")[0].strip().lower() != "application/json":
            return self._json(415, {"ok": False, "error": "a request must be Content-Type: application/json"})
        call = FAST.get(name) or SLOW.get(name)
        if call is None:
            return self._json(404, {"ok": False, "error": f"no such call: {name[:80]}"})
        try:
            size = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            size = -1
        if not 0 < size <= MAX_BODY:
            return self._json(413, {"ok": False, "error": f"a request must be 1 to {MAX_BODY} bytes of JSON"})
        try:
            req = json_value(self.rfile.read(size), "workbench", "request")
        except InputError as e:
            if "not valid JSON" in e.problem or "is not JSON" in e.problem:
                return self._json(400, {"ok": False, "error": "workbench: request is not JSON"})
            return self._json(400, {"ok": False, "error": str(e)})
        except (TimeoutError, OSError):
            return  # the client stalled mid-body, or passed the deadline: the connection is closed
        self.deadline.cancel()  # the request has arrived: what follows is the answer's time
        if name in FAST:
            return self._answer(call, req)
        with self.tickets_lock:  # the newest call of each kind; older ones still waiting are dropped
            self.tickets[name] = ticket = self.tickets.get(name, 0) + 1
        if not Z3_LOCK.acquire(timeout=SLOW_WAIT_S):
            return self._json(503, {"ok": False, "error": "busy: a proof is running; try again"})
        try:
            if self.tickets[name] != ticket:
                return self._json(409, {"ok": False, "error": f"superseded by a newer {name} call"})
            self._answer(call, req)
        finally:
            Z3_LOCK.release()

    def _answer(self, call, req: object) -> None:
        try:
            self._json(200, call(req))
        except InputError as e:
            self._json(400, {"ok": False, "error": str(e)})
        except Exception as e:  # noqa: BLE001 - answer and keep serving
            self._json(500, {"ok": False, "error": f"internal error: {type(e).__name__}: {e}"[:400]})


class Server(ThreadingHTTPServer):
    """The stdlib server, silent when a client disconnects (a closed tab, a reload): the stdlib
    prints a traceback for that; any other error is one line on stderr."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        err = sys.exc_info()[1]
        if isinstance(err, ConnectionError):
            return
        sys.stderr.write(f"bankproof serve: {type(err).__name__}: {err}\n")


class Server6(Server):
    address_family = socket.AF_INET6


def make_server(path: str | None, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """A server (not yet serving) for the problem at ``path`` on a loopback ``host``; ``port`` 0
    picks a free port. Its token is ``server.RequestHandlerClass.token``."""
    if host not in LOOPBACK:
        raise InputError("serve", "--host", f"must be a loopback address ({', '.join(LOOPBACK)})", host)
    if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
        raise InputError("serve", "--port", "must be between 0 and 65535", port)
    state = start_state(path)
    secret = secrets.token_urlsafe(24)
    fresh = {"state": state, "tickets": {}, "tickets_lock": threading.Lock(), "token": secret}
    handler = type("BoundHandler", (Handler,), fresh)
    try:
        server = (Server6 if host == "::1" else Server)((host, port), handler)
    except OSError as e:
        raise InputError("serve", "--port", f"cannot listen on {host} port {port} ({e.strerror})") from None
    return server


def url(server: ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def token(server: ThreadingHTTPServer) -> str:
    """The token every API call to ``server`` must carry (``X-Bankproof-Token``)."""
    return server.RequestHandlerClass.token
