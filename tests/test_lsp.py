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
        result = c.request("initialize", {"processId": None, "rootUri": None,
                                          "capabilities": {"textDocument": {"rename": {"prepareSupport": True}}}})
        caps = result["capabilities"]
        assert caps["hoverProvider"] and caps["definitionProvider"] and "completionProvider" in caps
        assert caps["signatureHelpProvider"]["triggerCharacters"] == ["(", " "]
        assert caps["documentSymbolProvider"] and caps["referencesProvider"]
        assert caps["renameProvider"] == {"prepareProvider": True}
        assert caps["codeActionProvider"]["codeActionKinds"] == ["quickfix"]
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


FEATURES = """\
; add: the sum of two scalars
(define (add (a [Int]) (b [Int])) (+ a b))
(define v [1 2 3])
(add (length v) 2)
(+ 1 2.5)
(tann 1.0)
(define (scale (s [Float]) (xs [Float 3])) (* s xs))
"""


def _apply(text: str, edits: list[dict]) -> str:
    """``text`` with the protocol's edits made (positions as the ASCII text has them)."""
    lines = text.split("\n")
    offset = lambda p: sum(len(line) + 1 for line in lines[: p["line"]]) + p["character"]  # noqa: E731
    for e in sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True):
        text = text[: offset(e["range"]["start"])] + e["newText"] + text[offset(e["range"]["end"]):]
    return text


def test_completion_edits_the_whole_name_typed(client, tmp_path):
    """Issue 27: without an edit range an editor completed `(int->f` as `(int->filter`: its own
    word stops at `>`."""
    uri = (tmp_path / "c.rem").as_uri()
    _open(client, uri, "(define xs [1 2])\n(int->f\n")
    items = {i["label"]: i for i in client.request("textDocument/completion", _at(uri, 1, 7))["items"]}
    assert items["int->float"]["textEdit"] == {
        "range": {"start": {"line": 1, "character": 1}, "end": {"line": 1, "character": 7}}, "newText": "int->float"}
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"text": "(define xs [1 2])\n(iota/\n"}]})
    client.diagnostics(uri)
    items = {i["label"]: i for i in client.request("textDocument/completion", _at(uri, 1, 6))["items"]}
    assert items["iota/v"]["textEdit"]["range"]["start"] == {"line": 1, "character": 1}
    assert items["xs"]["textEdit"]["newText"] == "xs"


def test_signature_help_names_the_parameter_at_the_cursor(client, tmp_path):
    uri = (tmp_path / "s.rem").as_uri()
    _open(client, uri, FEATURES + "(add 1 \n(reduce + \n(sum \n")
    help = client.request("textDocument/signatureHelp", _at(uri, 7, 7))
    (sig,) = help["signatures"]
    assert sig["label"] == "(add (a : (Arr Int (Shp))) (b : (Arr Int (Shp)))) → (Arr Int (Shp))"
    assert help["activeParameter"] == 1
    start, end = sig["parameters"][1]["label"]
    assert sig["label"][start:end] == "(b : (Arr Int (Shp)))"
    assert sig["documentation"]["value"] == "add: the sum of two scalars"
    help = client.request("textDocument/signatureHelp", _at(uri, 8, 10))  # a primitive: its types and doc
    assert help["signatures"][0]["label"].startswith("(reduce ") and help["activeParameter"] == 1
    assert help["signatures"][0]["documentation"]["value"]
    help = client.request("textDocument/signatureHelp", _at(uri, 9, 5))  # the prelude: names from its λ
    assert help["signatures"][0]["label"].startswith("(sum (xs : (Arr t (Shp n)))) → ")
    assert client.request("textDocument/signatureHelp", _at(uri, 2, 3)) is None  # (not in an application)


def test_document_symbols_references_and_rename(client, tmp_path):
    uri = (tmp_path / "r.rem").as_uri()
    _open(client, uri, FEATURES)
    symbols = client.request("textDocument/documentSymbol", {"textDocument": {"uri": uri}})
    assert [(s["name"], s["kind"]) for s in symbols] == [("add", 12), ("v", 13), ("scale", 12)]
    assert symbols[1]["selectionRange"] == {"start": {"line": 2, "character": 8}, "end": {"line": 2, "character": 9}}
    assert symbols[1]["detail"] == "(Arr Int (Shp 3))"

    refs = client.request("textDocument/references", {**_at(uri, 3, 13), "context": {"includeDeclaration": True}})
    assert [(r["range"]["start"]["line"], r["range"]["start"]["character"]) for r in refs] == [(2, 8), (3, 13)]
    refs = client.request("textDocument/references", {**_at(uri, 1, 39), "context": {"includeDeclaration": False}})
    assert [(r["range"]["start"]["line"], r["range"]["start"]["character"]) for r in refs] == [(1, 39)]  # b in (+ a b)

    assert client.request("textDocument/prepareRename", _at(uri, 1, 35)) is None  # `+`: not this document's
    rng = client.request("textDocument/prepareRename", _at(uri, 3, 2))
    assert rng == {"start": {"line": 3, "character": 1}, "end": {"line": 3, "character": 4}}
    edit = client.request("textDocument/rename", {**_at(uri, 3, 2), "newName": "plus"})
    renamed = _apply(FEATURES, edit["changes"][uri])
    assert "(define (plus (a [Int])" in renamed and "(plus (length v) 2)" in renamed and "add" not in renamed.split("\n", 1)[1]

    for position, name, why in [(_at(uri, 1, 39), "a", "`a` is used where `b` is visible"),  # b → a: (+ a a)
                                (_at(uri, 2, 8), "add", "used where"),  # v → add
                                (_at(uri, 2, 8), "(x", "not a name")]:
        client.next_id += 1
        client.send({"id": client.next_id, "method": "textDocument/rename", "params": {**position, "newName": name}})
        reply = client.wait(lambda m: m.get("id") == client.next_id and "method" not in m)
        assert why in reply["error"]["message"] and reply["error"]["code"] == -32803, reply


def test_code_actions_apply_the_fixes_the_messages_suggest(client, tmp_path):
    uri = (tmp_path / "a.rem").as_uri()
    diags = _open(client, uri, FEATURES)
    assert [d["range"]["start"]["line"] for d in diags] == [4, 5]
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": diags[0]["range"], "context": {"diagnostics": [diags[0]]}})
    assert [a["title"] for a in actions] == ["apply `int->float`", "write `1.0`"]
    assert all(a["kind"] == "quickfix" and a["diagnostics"][0]["range"] == diags[0]["range"] for a in actions)
    assert "(+ (int->float 1) 2.5)" in _apply(FEATURES, actions[0]["edit"]["changes"][uri])
    fixed = _apply(FEATURES, actions[1]["edit"]["changes"][uri])
    assert "(+ 1.0 2.5)" in fixed
    (spell,) = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": diags[1]["range"], "context": {"diagnostics": [diags[1]]}})
    fixed = _apply(fixed, spell["edit"]["changes"][uri])
    assert spell["title"] == "write `tan`" and "(tan 1.0)" in fixed
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"text": fixed}]})
    assert client.diagnostics(uri) == []  # both fixes applied: the document checks
