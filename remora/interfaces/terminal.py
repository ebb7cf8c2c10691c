"""The REPL's input at a terminal, on prompt_toolkit (what IPython and ptpython use).

- A multi-line input is one buffer: Enter inserts a newline while brackets are open and runs
  the input once they balance (Esc Enter always inserts one); the history — a file, one entry
  per input — recalls the whole input with Up, to be edited as one.
- The history is searched as in IPython: Up (and Down) with something typed goes through the
  inputs that start with it; Ctrl-R searches backwards for a text anywhere in an input, Enter
  (or Esc) ends the search with the input found in the buffer, to run or edit, and Ctrl-C or
  Ctrl-G abandons it.
- The input is highlighted with the Pygments lexer (:mod:`remora.interfaces.lexer`).
- Tab completes the names in scope — keywords, primitives, the prelude's names and the
  session's definitions — and the ``:``-commands, each shown with its type (or its use).

A *dumb* terminal (``TERM=dumb``, an editor's inferior shell) can neither redraw a buffer
nor colour it, and edits the line itself: there each line is read on its own with ``input``
(the terminal's own line editing; Ctrl-D and Ctrl-C as the terminal delivers them), after
``remora>`` or the continuation prompt, and the complete input enters the same history file
as one entry.

Only ``remora repl`` at a terminal imports this module (prompt_toolkit takes 0.1–0.25 s to load).
"""

from __future__ import annotations

import re
from typing import Callable, Iterator

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import is_searching
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.lexers import PygmentsLexer
from prompt_toolkit.utils import is_dumb_terminal

from .lexer import RemoraLexer

#: the name being typed: everything back to a space, a bracket or a comment
_WORD = re.compile(r"[^\s()\[\];]*\Z")


class InputHistory(FileHistory):
    """The history file, one entry per complete input: prompt_toolkit appends each input it
    reads; lines read one at a time (a dumb terminal) are recorded as one input (:meth:`record`)."""

    per_line = False

    def append_string(self, string: str) -> None:
        if not self.per_line:
            super().append_string(string)

    def record(self, text: str) -> None:
        if self.per_line and text.strip():
            super().append_string(text)


class NameCompleter(Completer):
    """Completion of ``:``-commands (with their use) and of names in scope (with their types)."""

    def __init__(self, names: Callable[[], dict[str, str]], commands: dict[str, str]):
        self.names = names
        self.commands = commands

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        before = document.text_before_cursor
        if before.lstrip().startswith(":") and not any(c.isspace() for c in before.strip()):
            typed = before.strip()
            for name, use in sorted(self.commands.items()):
                if (":" + name).startswith(typed):
                    yield Completion(":" + name, -len(typed), display_meta=use)
            return
        word = _WORD.search(before).group()
        if not word:
            return
        for name, type_text in sorted(self.names().items()):
            if name.startswith(word):
                yield Completion(name, -len(word), display_meta=type_text)


class TerminalInput:
    """Reads one complete input at a time from the terminal (see the module's docstring)."""

    def __init__(self, history_path: str, prompt: str, continuation: str, incomplete: Callable[[str], bool],
                 names: Callable[[], dict[str, str]], commands: dict[str, str]):
        self.prompt, self.continuation = prompt, continuation
        self.incomplete = incomplete
        self.dumb = is_dumb_terminal()
        self.history = InputHistory(history_path)
        self.history.per_line = self.dumb
        if self.dumb:
            return
        self.session: PromptSession[str] = PromptSession(
            history=self.history,
            lexer=PygmentsLexer(RemoraLexer),
            completer=NameCompleter(names, commands),
            complete_while_typing=False,
            multiline=not self.dumb,
            prompt_continuation=lambda width, line, wrap: continuation,
            key_bindings=self._bindings(),
            enable_history_search=True,
        )

    def _bindings(self) -> KeyBindings:
        kb = KeyBindings()
        # (not while searching the history: there prompt_toolkit's own bindings accept the search
        # — Enter, Esc — and the input is the buffer being searched for, not a program)
        editing = ~is_searching

        @kb.add("enter", filter=editing)
        def _enter(event) -> None:
            buf = event.current_buffer
            state = buf.complete_state
            if state is not None and state.current_completion is not None:
                buf.apply_completion(state.current_completion)
            elif not self.incomplete(buf.text):
                buf.validate_and_handle()
            else:
                buf.insert_text("\n")

        @kb.add("escape", "enter", filter=editing)
        def _newline(event) -> None:
            event.current_buffer.insert_text("\n")

        return kb

    def read(self) -> str | None:
        """The next complete input; None at end of input (Ctrl-D at an empty prompt).  Ctrl-C
        raises KeyboardInterrupt, abandoning what was typed."""
        if self.dumb:
            return self._read_lines()
        try:
            return self.session.prompt(self.prompt)
        except EOFError:
            return None

    def _read_lines(self) -> str | None:
        lines: list[str] = []
        while True:
            try:
                line = input(self.continuation if lines else self.prompt)
            except EOFError:
                text = "\n".join(lines) if lines else None
                break
            lines.append(line)
            text = "\n".join(lines)
            if not self.incomplete(text):
                break
        if text is not None:
            self.history.record(text)
        return text

