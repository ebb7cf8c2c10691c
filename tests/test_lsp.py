"""`remora lsp` driven as an editor drives it: a JSON-RPC client on the server's standard input
and output that initializes, opens a document, edits it, asks for hover, definition and
completion, and shuts the server down (contract §9)."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import subprocess_env

pytest.importorskip("pygls", reason="remora lsp needs the lsp extra (pygls)")

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 60

DOCUMENT = """\
(define (double (x [Int])) (* 2 x))
(define v [1 2 3])
(double v)
(+ 1 2.5)
(let ((a 1) (b 2)) (* a b))
(define id (Iλ ((n Dim)) (λ ((xs [Float n])) xs)))
"""


class Client:
    """A language client: Content-Length framed JSON-RPC over the server's pipes."""

    def __init__(self, root: Path):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "remora", "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, cwd=root, env=subprocess_env(),
        )
        self.messages: queue.Queue = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    self.messages.put(None)
                    return
                line = line.decode("ascii").strip()
                if not line:
                    break
                key, _, value = line.partition(":")
                headers[key.lower()] = value.strip()
            body = out.read(int(headers["content-length"]))
            self.messages.put(json.loads(body))

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        self.proc.stdin.write(f"Content-Length: {len(body)}\r\n\r\n".encode("ascii") + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params: dict) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: dict | None) -> dict:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        reply = self.wait(lambda m: m.get("id") == self.next_id and "method" not in m)
        assert "error" not in reply, reply
        return reply.get("result")

    def wait(self, predicate, timeout: float = TIMEOUT) -> dict:
        """The first message from the server that satisfies ``predicate`` (others are dropped;
        requests from the server are answered with null)."""
        while True:
            try:
                message = self.messages.get(timeout=timeout)
            except queue.Empty:
                pytest.fail("the server did not answer in time")
            if message is None:
                pytest.fail(f"the server exited: {self.proc.stderr.read().decode(errors='replace')}")
            if "method" in message and "id" in message:  # a request to the client
                self.send({"id": message["id"], "result": None})
                continue
            if predicate(message):
                return message

    def diagnostics(self, uri: str, version: int | None = None) -> list[dict]:
        message = self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                            and m["params"]["uri"] == uri
                            and (version is None or m["params"].get("version") in (None, version)))
        return message["params"]["diagnostics"]


@pytest.fixture
def client(tmp_path):
    c = Client(ROOT)
    c.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}})
    c.notify("initialized", {})
    yield c
    if c.proc.poll() is None:
        c.proc.kill()
    c.proc.wait(timeout=TIMEOUT)


def _open(client: Client, uri: str, text: str) -> list[dict]:
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "remora", "version": 1, "text": text}})
    return client.diagnostics(uri)


def _at(uri: str, line: int, character: int) -> dict:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}


def test_initialize_advertises_the_features(tmp_path):
    c = Client(ROOT)
    try:
        result = c.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        caps = result["capabilities"]
        assert caps["hoverProvider"] and caps["definitionProvider"] and "completionProvider" in caps
        assert result["serverInfo"]["name"] == "remora"
        c.request("shutdown", None)
        c.notify("exit", None)
        assert c.proc.wait(timeout=TIMEOUT) == 0
    finally:
        if c.proc.poll() is None:
            c.proc.kill()


def test_a_session_as_an_editor_runs_it(client, tmp_path):
    uri = (tmp_path / "doc.rem").as_uri()
    # a type error: published with the range of the culprit (line 4, `2.5`), 0-based
    diags = _open(client, uri, DOCUMENT)
    assert len(diags) == 1
    d = diags[0]
    assert d["range"] == {"start": {"line": 3, "character": 5}, "end": {"line": 3, "character": 8}}
    assert "atom type Float" in d["message"] and d["severity"] == 1 and d["source"] == "remora"

    # forms before and after the error still answer: hover shows types from the typed tree
    hover = client.request("textDocument/hover", _at(uri, 2, 2))  # `double` in (double v)
    assert "double : (Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp))" in hover["contents"]["value"]
    hover = client.request("textDocument/hover", _at(uri, 2, 0))  # the application itself
    assert "(Arr Int (Shp 3))" in hover["contents"]["value"]
    hover = client.request("textDocument/hover", _at(uri, 0, 28))  # `*`: its type here and its doc
    assert "* : (Arr (-> ((Arr Int (Shp)) (Arr Int (Shp))) (Arr Int (Shp))) (Shp))" in hover["contents"]["value"]
    assert "Multiplication" in hover["contents"]["value"]
    hover = client.request("textDocument/hover", _at(uri, 5, 45))  # `xs` in the body
    assert "xs : (Arr Float (Shp n))" in hover["contents"]["value"]

    # go to definition: a define, a let binder, a λ parameter, an Iλ binder
    loc = client.request("textDocument/definition", _at(uri, 2, 8))  # v
    assert loc["uri"] == uri and loc["range"]["start"] == {"line": 1, "character": 8}
    loc = client.request("textDocument/definition", _at(uri, 4, 24))  # b in (* a b)
    assert loc["range"] == {"start": {"line": 4, "character": 13}, "end": {"line": 4, "character": 14}}
    loc = client.request("textDocument/definition", _at(uri, 0, 32))  # x in (* 2 x)
    assert loc["range"]["start"] == {"line": 0, "character": 17}
    loc = client.request("textDocument/definition", _at(uri, 5, 40))  # n in [Float n]
    assert loc["range"]["start"] == {"line": 5, "character": 17}

    # completion: primitives, the prelude, the document's definitions, with their types
    result = client.request("textDocument/completion", _at(uri, 5, 0))
    items = {i["label"]: i for i in result["items"]}
    assert items["double"]["detail"] == "(Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp))"
    assert items["v"]["detail"] == "(Arr Int (Shp 3))"
    assert "iota/v" in items and "sum" in items and "define" in items
    assert items["length"]["detail"].startswith("(Arr (Pi ((d Dim) (s Shape))")

    # the error fixed: the diagnostics clear
    fixed = DOCUMENT.replace("(+ 1 2.5)", "(+ 1 2)")
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"text": fixed}]})
    assert client.diagnostics(uri) == []

    # an unclosed bracket while typing: one diagnostic at the bracket; earlier forms still answer
    broken = fixed + "(double\n"
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3},
                                             "contentChanges": [{"text": broken}]})
    diags = client.diagnostics(uri)
    assert [d["range"]["start"] for d in diags] == [{"line": 6, "character": 0}]
    assert "unclosed" in diags[0]["message"]
    hover = client.request("textDocument/hover", _at(uri, 2, 8))
    assert "v : (Arr Int (Shp 3))" in hover["contents"]["value"]

    client.request("shutdown", None)
    client.notify("exit", None)
    assert client.proc.wait(timeout=TIMEOUT) == 0


def test_ranges_count_utf16_units(client, tmp_path):
    """Columns are UTF-16 code units: a name after a character outside the BMP is shifted by 2."""
    uri = (tmp_path / "wide.rem").as_uri()
    diags = _open(client, uri, "(define 𝑥 1)\n(+ 𝑥 #t)\n")
    assert diags[0]["range"] == {"start": {"line": 1, "character": 6}, "end": {"line": 1, "character": 8}}
    loc = client.request("textDocument/definition", _at(uri, 1, 3))
    assert loc["range"] == {"start": {"line": 0, "character": 8}, "end": {"line": 0, "character": 10}}


def test_prelude_names_go_to_the_prelude(client, tmp_path):
    uri = (tmp_path / "p.rem").as_uri()
    assert _open(client, uri, "(sum [1 2 3])\n") == []
    loc = client.request("textDocument/definition", _at(uri, 0, 2))
    assert loc["uri"].endswith("/prelude/prelude.rem")
    text = Path(loc["uri"][len("file://"):]).read_text(encoding="utf-8").split("\n")[loc["range"]["start"]["line"]]
    assert text.startswith("(define sum")


@pytest.mark.parametrize("broken", [
    # a Content-Length shorter than the body: the rest of the body runs into the next header
    lambda body: f"Content-Length: {len(body) - 7}\r\n\r\n".encode() + body,
    # a header block without Content-Length: the body that follows is not framed at all
    lambda body: b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + body,
], ids=["short-content-length", "no-content-length"])
def test_a_broken_message_costs_only_itself(client, tmp_path, broken):
    """Issue 29 item 10: after one badly framed message the server reads the next header and
    answers the requests after it (it used to stay alive and answer nothing)."""
    uri = (tmp_path / "d.rem").as_uri()
    assert _open(client, uri, "(define v [1 2 3])\n(+ 1 2)\n") == []
    body = json.dumps({"jsonrpc": "2.0", "id": 999, "method": "textDocument/hover",
                       "params": _at(uri, 1, 1)}).encode()
    client.proc.stdin.write(broken(body))
    client.proc.stdin.flush()
    for _ in range(2):  # the next request, and the one after it
        hover = client.request("textDocument/hover", _at(uri, 0, 9))
        assert "v : (Arr Int (Shp 3))" in hover["contents"]["value"]
    client.request("shutdown", None)
    client.notify("exit", None)
    assert client.proc.wait(timeout=TIMEOUT) == 0
