"""``remora lsp``: a Language Server on standard input and output (``pip install 'remora[lsp]'``).

Every open document is analysed by :class:`~remora.interfaces.document.Document` — the real
reader, parser and checker — on open and on every change, and its errors are published as
diagnostics, each with the full range of the culprit.  Hover shows the type of the innermost
expression under the cursor (a primitive's documentation too); go to definition finds the
``define`` or the ``let``/``λ``/``Iλ``/``Tλ``/``unbox``/quantifier binder of a name (a prelude
name's definition in the prelude); completion offers the names in scope with their types.

This module is the protocol's glue only (pygls); positions are converted here between the
reader's (1-based lines, columns in characters) and the protocol's (0-based lines, columns in
UTF-16 code units).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import BinaryIO
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..errors import RemoraError, Span
from .document import Document

_KINDS = {
    "keyword": lsp.CompletionItemKind.Keyword,
    "primitive": lsp.CompletionItemKind.Function,
    "prelude": lsp.CompletionItemKind.Function,
    "definition": lsp.CompletionItemKind.Variable,
    "local": lsp.CompletionItemKind.Variable,
}


# ---------------------------------------------------------------------------
# Positions


def _utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def lsp_position(lines: list[str], line: int, col: int) -> lsp.Position:
    """The protocol's position of the reader's (``line``, ``col``)."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return lsp.Position(line=max(line - 1, 0), character=_utf16_length(text[: max(col - 1, 0)]))


def reader_position(lines: list[str], position: lsp.Position) -> tuple[int, int]:
    """The reader's (line, column) of a protocol position."""
    text = lines[position.line] if position.line < len(lines) else ""
    units = 0
    for i, ch in enumerate(text):
        if units >= position.character:
            return position.line + 1, i + 1
        units += 2 if ord(ch) > 0xFFFF else 1
    return position.line + 1, len(text) + 1


def lsp_range(lines: list[str], span: Span) -> lsp.Range:
    return lsp.Range(lsp_position(lines, span.line, span.col), lsp_position(lines, span.end_line, span.end_col))


def diagnostic(lines: list[str], err: RemoraError) -> lsp.Diagnostic:
    """An error as a diagnostic: its whole span, its message and notes."""
    if err.span is not None:
        where = lsp_range(lines, err.span)
    else:
        where = lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0))
    message = "\n".join([err.message, *(f"note: {n}" for n in err.notes)])
    return lsp.Diagnostic(range=where, message=message, severity=lsp.DiagnosticSeverity.Error, source="remora")


def _path_of(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


# ---------------------------------------------------------------------------
# The server


class RemoraServer(LanguageServer):
    """The language server: one analysed :class:`Document` per open URI."""

    def __init__(self) -> None:
        super().__init__("remora", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Full)
        self.documents: dict[str, Document] = {}

    def analyse(self, uri: str) -> None:
        """Analyse the document again and publish its diagnostics (none: they clear)."""
        text = self.workspace.get_text_document(uri).source
        doc = Document(text, _path_of(uri))
        self.documents[uri] = doc
        lines = text.split("\n")
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[diagnostic(lines, e) for e in doc.errors])
        )

    def at(self, params) -> tuple[Document, int, int] | None:
        doc = self.documents.get(params.text_document.uri)
        if doc is None:
            return None
        line, col = reader_position(doc.text.split("\n"), params.position)
        return doc, line, col


def make_server() -> RemoraServer:
    server = RemoraServer()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: RemoraServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.analyse(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: RemoraServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.analyse(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: RemoraServer, params: lsp.DidCloseTextDocumentParams) -> None:
        ls.documents.pop(params.text_document.uri, None)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: RemoraServer, params: lsp.HoverParams) -> lsp.Hover | None:
        found = ls.at(params)
        if found is None:
            return None
        doc, line, col = found
        text = doc.hover(line, col)
        if text is None:
            return None
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text))

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: RemoraServer, params: lsp.DefinitionParams) -> lsp.Location | None:
        found = ls.at(params)
        if found is None:
            return None
        doc, line, col = found
        span = doc.definition(line, col)
        if span is None:
            return None
        if span.source.name == doc.name:
            return lsp.Location(uri=params.text_document.uri, range=lsp_range(doc.text.split("\n"), span))
        path = Path(span.source.name)  # a prelude definition
        return lsp.Location(uri=path.as_uri(), range=lsp_range(span.source.text.split("\n"), span))

    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=["(", "["]))
    def completion(ls: RemoraServer, params: lsp.CompletionParams) -> lsp.CompletionList:
        found = ls.at(params)
        items = []
        if found is not None:
            doc, line, col = found
            for c in doc.completions(line, col):
                items.append(lsp.CompletionItem(label=c.name, kind=_KINDS[c.kind], detail=c.detail))
        return lsp.CompletionList(is_incomplete=False, items=items)

    return server


class ResynchronisingInput:
    """Standard input as the server reads it, able to find the next message after a broken one.

    pygls reads header lines until a blank one, then exactly ``Content-Length`` bytes of body.
    After a message whose ``Content-Length`` is shorter than its body — or a header block
    without one — the rest of that body has no line end of its own: the next line read is the
    leftover body glued to the next message's ``Content-Length`` header, which then matched
    nothing, and every message after was lost the same way (the server stayed alive but
    answered nothing).  Here a header line that ends in a ``Content-Length`` field is handed
    over as that field alone, so the next message is read whole: one broken message costs
    itself only.  (A JSON body cannot hold a raw line end, so no body is mistaken for a header.)
    """

    def __init__(self, stream: BinaryIO):
        self.stream = stream

    def readline(self) -> bytes:
        line = self.stream.readline()
        found = _CONTENT_LENGTH.search(line)
        return line[found.start():] if found is not None and found.start() > 0 else line

    def read(self, n: int) -> bytes:
        return self.stream.read(n)


_CONTENT_LENGTH = re.compile(rb"Content-Length: \d+\r\n\Z")


def main() -> int:
    """Serve on standard input and output until the client says exit: 0 if it asked for a
    shutdown first, 1 if not (or if the input ended), as the protocol says."""
    import os
    import sys

    server = make_server()
    server.start_io(ResynchronisingInput(sys.stdin.buffer))
    if sys.stdout is None or sys.stdout.closed:  # (the server closes its output when it exits)
        sys.stdout = open(os.devnull, "w", encoding="utf-8")
    return 0 if server.protocol._shutdown else 1
