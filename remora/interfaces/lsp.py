"""``remora lsp``: a Language Server on standard input and output (``pip install 'remora[lsp]'``).

Every open document is analysed by :class:`~remora.interfaces.document.Document` — the real
reader, parser and checker — on open and on every change, and its errors are published as
diagnostics, each with the full range of the culprit.  Hover shows the type of the innermost
expression under the cursor (a primitive's documentation too); go to definition finds the
``define`` or the ``let``/``λ``/``Iλ``/``Tλ``/``unbox``/quantifier binder of a name (a prelude
name's definition in the prelude); completion offers the names in scope with their types, each
as an edit of the whole name typed so far (names hold ``-``, ``>`` and ``/``); signature help
shows the parameters of the function being applied; document symbols list the definitions;
references and rename follow the binder of a name; code actions apply the fixes an error's
message suggests (``int->float``, ``2.0``, a name it meant).

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
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..errors import RemoraError, Span
from .document import Document
from .typed_index import contains

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
            lines = doc.text.split("\n")
            typed = name_before(lines[line - 1] if line <= len(lines) else "", col)
            # The edit replaces the whole name typed so far: an editor's own idea of a word stops
            # at `-`, `>` or `/`, and completed `(int->f` as `(int->filter`.
            where = lsp.Range(lsp_position(lines, line, col - len(typed)), lsp_position(lines, line, col))
            for c in doc.completions(line, col):
                items.append(lsp.CompletionItem(label=c.name, kind=_KINDS[c.kind], detail=c.detail, filter_text=c.name,
                                                text_edit=lsp.TextEdit(range=where, new_text=c.name)))
        return lsp.CompletionList(is_incomplete=False, items=items)

    @server.feature(lsp.TEXT_DOCUMENT_SIGNATURE_HELP,
                    lsp.SignatureHelpOptions(trigger_characters=["(", " "], retrigger_characters=[" ", ")"]))
    def signature_help(ls: RemoraServer, params: lsp.SignatureHelpParams) -> lsp.SignatureHelp | None:
        found = ls.at(params)
        if found is None:
            return None
        doc, line, col = found
        at = doc.signature_at(line, col)
        if at is None:
            return None
        sig, argument = at
        label = sig.label
        parameters = [lsp.ParameterInformation(label=(_utf16_length(label[:a]), _utf16_length(label[:b])))
                      for a, b in sig.parameters]
        documentation = (lsp.MarkupContent(kind=lsp.MarkupKind.PlainText, value=sig.documentation)
                         if sig.documentation else None)
        info = lsp.SignatureInformation(label=label, parameters=parameters, documentation=documentation)
        return lsp.SignatureHelp(signatures=[info], active_signature=0,
                                 active_parameter=min(argument, max(len(parameters) - 1, 0)))

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def document_symbol(ls: RemoraServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
        doc = ls.documents.get(params.text_document.uri)
        if doc is None:
            return []
        lines = doc.text.split("\n")
        return [lsp.DocumentSymbol(name=name, detail=detail, range=lsp_range(lines, whole),
                                   selection_range=lsp_range(lines, written),
                                   kind=lsp.SymbolKind.Function if function else lsp.SymbolKind.Variable)
                for name, function, whole, written, detail in doc.symbols()]

    @server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
    def references(ls: RemoraServer, params: lsp.ReferenceParams) -> list[lsp.Location] | None:
        found = ls.at(params)
        if found is None:
            return None
        doc, line, col = found
        occurrences = doc.occurrences(line, col)
        if occurrences is None:
            return None
        binding, _, spans = occurrences
        if binding is not None and not params.context.include_declaration:
            spans = spans[1:]
        lines = doc.text.split("\n")
        return [lsp.Location(uri=params.text_document.uri, range=lsp_range(lines, s)) for s in spans]

    @server.feature(lsp.TEXT_DOCUMENT_PREPARE_RENAME)
    def prepare_rename(ls: RemoraServer, params: lsp.PrepareRenameParams) -> lsp.Range | None:
        found = ls.at(params)
        if found is None:
            return None
        doc, line, col = found
        occurrences = doc.occurrences(line, col)
        if occurrences is None or occurrences[0] is None:
            return None  # (a primitive's or the prelude's name, or no name: nothing to rename here)
        lines = doc.text.split("\n")
        return next((lsp_range(lines, s) for s in occurrences[2] if contains(s, line, col)), None)

    @server.feature(lsp.TEXT_DOCUMENT_RENAME)
    def rename(ls: RemoraServer, params: lsp.RenameParams) -> lsp.WorkspaceEdit:
        found = ls.at(params)
        if found is None:
            raise _request_failed("cannot rename: the document is not open")
        doc, line, col = found
        try:
            spans = doc.rename(line, col, params.new_name)
        except RemoraError as err:
            raise _request_failed(err.message) from None
        lines = doc.text.split("\n")
        edits = [lsp.TextEdit(range=lsp_range(lines, s), new_text=params.new_name) for s in spans]
        return lsp.WorkspaceEdit(changes={params.text_document.uri: edits})

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
    def code_action(ls: RemoraServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        doc = ls.documents.get(params.text_document.uri)
        if doc is None:
            return []
        lines = doc.text.split("\n")
        start = reader_position(lines, params.range.start)
        end = reader_position(lines, params.range.end)
        actions = []
        for err, fix in doc.fixes(*start, *end):
            edits = [lsp.TextEdit(range=lsp_range(lines, e.span), new_text=e.text) for e in fix.edits]
            actions.append(lsp.CodeAction(
                title=fix.title, kind=lsp.CodeActionKind.QuickFix, diagnostics=[diagnostic(lines, err)],
                edit=lsp.WorkspaceEdit(changes={params.text_document.uri: edits})))
        return actions

    return server


def _request_failed(message: str) -> JsonRpcException:
    """The protocol's RequestFailed error (-32803): a request understood but refused, ``message``
    saying why (the editor shows it)."""
    return JsonRpcException(message=message, code=-32803)


#: the name being typed: everything back to a space, a bracket, a quote or a comment
_NAME_BEFORE = re.compile(r"[^\s()\[\];\"']*\Z")


def name_before(text: str, col: int) -> str:
    """The part of a name written before the (1-based) column ``col`` of the line ``text``."""
    return _NAME_BEFORE.search(text[: col - 1]).group()  # type: ignore[union-attr]


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
