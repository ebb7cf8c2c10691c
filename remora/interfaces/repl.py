"""``remora repl``: an interactive session over the same :class:`~remora.interfaces.session.Session`.

Input is read until its brackets balance, so definitions can span lines.  Each
expression's value is printed; definitions persist; ``_`` is the last value.  ``:``-commands
inspect without evaluating (``:type``, ``:shape``, ``:explicit``), load files, trace
evaluation with the reference engine and set how values print (``:set print …``).  Errors
print exactly as the command line prints them and never end the session; Ctrl-C abandons the
current input, Ctrl-D (end of input) leaves.

At a terminal, input is edited with prompt_toolkit (:mod:`remora.interfaces.terminal`:
multi-line editing and history, highlighting, Tab completion), a definition prints
``name : TYPE``, and values are laid out for reading (:mod:`remora.interfaces.layout`: one row
per line, summaries beyond 1,000 atoms).  Without a terminal (piped input) there are no
prompts, so the output is only values — in the command line's one-line format — and errors,
and an error names the line of the input stream it is on.  The exit status is 1 if any input
failed, else 0.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import IO, Callable

from ..front import syntax as S
from .session import EVALUATION_RECURSION_LIMIT, Session, deep_recursion, describe_form
from ..erasure.erase import erase_form
from ..statics import typed as T
from ..errors import RemoraError, RemoraSyntaxError, Source, Span, located_at
from ..front.reader import is_incomplete
from ..dynamics.runtime import RunConfig
from .streams import MAX_SOURCE_BYTES, OutputError, SourceError, emit, flush, read_source, report
from ..statics.typed import TyDefine, TyExprForm, show_term
from ..statics.types import TArr, prune
from .layout import EXACT, LIMIT, Display, terminal_width
from .progress import running
from .layout import show as show_layout
from .typed_index import referenced_keys
from .backend_switch import OnBackends
from .docs import leading_comment

PROMPT, CONTINUE = "remora> ", "...     "
HELP = """\
Enter Remora expressions or (define ...) forms; brackets may span lines.
  :type EXPR      the type of EXPR (not evaluated)
  :shape EXPR     the shape its type gives EXPR
  :explicit EXPR  EXPR with every inferred t-app/i-app written out
  :trace EXPR     evaluate EXPR step by step with the reference engine
  :load FILE      run a program file; its definitions stay
  :time EXPR      evaluate EXPR (or any input) and say how long it took
  :doc NAME       the type and documentation of a primitive, definition or keyword
  :backend NAME   run from now on on the array library NAME (numpy, jax, dask); alone, which one
  :set print full|short|rows|line
                  print values whole or summarised beyond 1,000 atoms, one row per line or on one line
  :set precision N|none
                  print Floats with at most N digits after the point (none: as they read back)
  :help           this text
  :quit           leave (Ctrl-D does too)
_ is the last value.  Tab completes names and commands; Up recalls the inputs that start with what
is typed, Ctrl-R searches them all.  Ctrl-C abandons the current input."""

#: what Tab shows beside each command
COMMANDS = {
    "type": "EXPR: the type of EXPR",
    "shape": "EXPR: the shape its type gives EXPR",
    "explicit": "EXPR: with inferred t-app/i-app written out",
    "trace": "EXPR: evaluate step by step",
    "load": "FILE: run a program file",
    "time": "EXPR: evaluate and time",
    "doc": "NAME: type and documentation",
    "backend": "NAME: the array library (numpy, jax, dask)",
    "set": "print full|short|rows|line, precision N|none",
    "help": "the commands",
    "quit": "leave",
}


class Repl:
    """One interactive session; ``interactive`` decides prompts, line editing, history and display."""

    def __init__(self, stdin: IO[str], stdout: IO[str], stderr: IO[str], interactive: bool, prelude: bool = True,
                 backend: str = "numpy"):
        self.stdin, self.out, self.err = stdin, stdout, stderr
        self.interactive = interactive
        self.prelude = prelude
        self.session = Session(run=RunConfig(stdin=stdin), prelude=prelude, backend=backend)
        #: the session on every backend used (``:backend``)
        self.backends = OnBackends(self.session)
        #: the comment above each definition of the session (what ``:doc`` shows), and the last
        #: input if it was only a comment (it documents a definition in the input after it)
        self.comments: dict[str, str | None] = {}
        self.comment: str | None = None
        #: how values print: for reading at a terminal, the command line's format otherwise
        self.display = Display() if interactive else EXACT
        #: the key `_` is bound under, and the keys of past values that definitions refer to
        self.last_key: str | None = None
        self.held: set[str] = set()
        self.terminal = None  # (reads the input at a terminal, once run() starts)
        self.lines = 0  # lines of the input stream read so far
        self.input_line = 1  # the number errors give the first line of the input being handled
        self.failed = False  # whether some input failed (the exit status says so)
        self.commands: dict[str, Callable[[str], None]] = {
            "type": self.cmd_type,
            "shape": self.cmd_shape,
            "explicit": self.cmd_explicit,
            "trace": self.cmd_trace,
            "load": self.cmd_load,
            "set": self.cmd_set,
            "time": self.cmd_time,
            "doc": self.cmd_doc,
            "backend": self.cmd_backend,
            "help": lambda arg: emit(HELP, self.out),
        }

    # --- reading ------------------------------------------------------------------

    def read_line(self, prompt: str) -> str | None:
        if self.interactive:
            try:
                line = input(prompt)
            except EOFError:
                emit("", self.out)
                return None
        else:
            line = self.stdin.readline(MAX_SOURCE_BYTES + 1)  # (an endless line must not fill memory)
            if line == "":
                return None
            if len(line) > MAX_SOURCE_BYTES and not line.endswith("\n"):
                self._skip_rest_of_line()
                self.lines += 1
                raise InputTooLong(self.lines, "this input line")
            line = line.rstrip("\n")
        self.lines += 1
        return line

    def _skip_rest_of_line(self) -> None:
        while True:
            chunk = self.stdin.readline(1 << 16)
            if chunk == "" or chunk.endswith("\n"):
                return

    def read_input(self) -> str | None:
        """One complete input (brackets balanced), or None at end of input; ``input_line`` becomes
        the number its first line has in errors (in a terminal, each input starts at 1)."""
        lines: list[str] = []
        size = 0
        self.input_line = 1 if self.interactive else self.lines + 1
        if self.terminal is not None:
            text = self.terminal.read()
            if text is None:
                emit("", self.out)
            elif len(text) > MAX_SOURCE_BYTES:
                raise InputTooLong(1, "this input")
            return text
        while True:
            line = self.read_line(PROMPT if not lines else CONTINUE)
            if line is None:
                return "\n".join(lines) if lines else None
            lines.append(line)
            size += len(line) + 1
            if size > MAX_SOURCE_BYTES:
                raise InputTooLong(self.input_line, "this input")
            text = "\n".join(lines)
            if not is_incomplete(text):
                return text

    def run(self) -> int:
        """Read, check, evaluate, print until end of input or ``:quit``: 1 if any input failed."""
        if self.interactive:
            self.terminal = self._terminal()
        try:
            while True:
                try:
                    text = self.read_input()
                except KeyboardInterrupt:
                    emit("^C" if self.interactive else "", self.out)
                    continue
                except InputTooLong as exc:
                    self.fail(f"<repl>:{exc.line}:1: error: {exc.what} is longer than {MAX_SOURCE_BYTES:,} "
                              f"characters, the limit for an input; it was skipped")
                    continue
                except OSError as exc:  # (standard input itself failed: nothing more can be read)
                    self.fail(f"remora: cannot read the input: {exc.strerror or exc}")
                    text = None
                if text is None or text.strip() in (":quit", ":q"):
                    return 1 if self.failed else 0
                try:
                    self.handle(text)
                except KeyboardInterrupt:
                    report("interrupted", self.err)
        finally:
            self.terminal = None

    def fail(self, message: str) -> None:
        """Report an input's failure; the session goes on, and will exit with status 1."""
        self.failed = True
        report(message, self.err)

    # --- evaluating ------------------------------------------------------------------

    def handle(self, text: str) -> None:
        """Run one complete input: a :command, or forms to check and evaluate."""
        stripped = text.strip()
        comment, self.comment = self.comment, None
        if all(line.lstrip().startswith(";") for line in stripped.splitlines()):  # (blank, or comments only)
            if stripped:  # (comment lines piped one input each: kept together)
                lines = [line.lstrip().lstrip(";").removeprefix(" ").rstrip() for line in stripped.splitlines()]
                self.comment = "\n".join(([comment] if comment else []) + lines)
            return
        try:
            if stripped.startswith(":"):
                name, _, arg = stripped[1:].partition(" ")
                command = self.commands.get(name)
                if command is None:
                    self.fail(f"unknown command :{name} (try :help)")
                else:
                    command(arg.strip())
                return
            for i, form in enumerate(self.session.forms(text, "<repl>", self.input_line)):
                self.run_form(form, comment if i == 0 else None)
        except RemoraError as err:
            flush(self.out)
            self.fail(err.report())
        except RecursionError:
            self.fail(f"<repl>:{self.input_line}:1: error: input nested too deeply")
        except (OutputError, BrokenPipeError):
            raise  # the output is gone: the session cannot go on (cli.main says why)
        except Exception as exc:  # a bug in remora: said plainly, and the session goes on
            if os.environ.get("REMORA_DEBUG"):
                import traceback

                traceback.print_exc(file=self.err)
            self.fail(f"remora: internal error: {type(exc).__name__}: {exc} (set REMORA_DEBUG=1 for details)")

    def run_form(self, form: S.TopForm, comment: str | None = None) -> None:
        """Check and run one form; a definition is documented by the comment above it in its
        input, or by ``comment`` (the input before it, if that was only a comment)."""
        snapshot = dict(self.session.checker.globals)
        try:
            typed = self.session.check_form(form)
            value = self.run_checked(typed)
        except BaseException:
            self._restore(snapshot)
            raise
        if isinstance(typed, TyExprForm):
            self._remember(typed, value)
            return
        self.comments[typed.name] = leading_comment(typed.span) or comment
        if self.interactive:
            emit(describe_form(typed), self.out)

    def run_checked(self, typed):
        text = None
        where = f"{typed.span.source.name}:{typed.span.line}:{typed.span.col}"
        with running(where, self.err if self.interactive else None, self.session.engine.xp):
            value = self.session.evaluate(typed)
            if isinstance(typed, TyExprForm):
                with located_at(typed.span):  # (a Dask value is computed here)
                    text = self.show(typed, value)
        if text is not None:
            emit(text, self.out)
        elif self.last_key is not None and self.last_key in referenced_keys(typed):
            self.held.add(self.last_key)  # a definition refers to this `_`: its value stays
        return value

    def show(self, typed, value) -> str:
        """A value as the session's display says (at a terminal, as wide as the terminal is now)."""
        display = self.display
        if self.interactive and display.rows:
            display = dataclasses.replace(display, width=terminal_width(self.out))
        return show_layout(value, T.form_type(typed), display)

    def _remember(self, typed, value) -> None:
        """``_`` is now ``value``: a new binding (so what referred to the last one keeps it); the
        last one's value is let go unless a definition refers to it."""
        previous = self.last_key
        self.last_key = self.session.bind("_", value, T.form_type(typed))
        if previous is not None and previous not in self.held:
            for session, _ in self.backends.sessions.values():
                session.engine.globals.pop(previous, None)

    def _restore(self, snapshot: dict) -> None:
        """Forget definitions that were checked but never ran: the checker and engine stay in step."""
        self.session.checker.globals.clear()
        self.session.checker.globals.update(snapshot)

    def _expression(self, arg: str):
        """The typed expression of a command's argument (checked, not evaluated)."""
        line = self.input_line
        forms = self.session.forms(arg, "<repl>", line)
        if len(forms) != 1 or not isinstance(forms[0], S.ExprForm):
            span = forms[0].span if forms else Span(Source("<repl>", ":" + arg, first_line=line), line, 1, line, 2)
            raise RemoraSyntaxError("expected one expression after the command", span)
        snapshot = dict(self.session.checker.globals)
        try:
            return self.session.check_form(forms[0])
        finally:
            self._restore(snapshot)

    def cmd_type(self, arg: str) -> None:
        emit(describe_form(self._expression(arg)), self.out)

    def cmd_shape(self, arg: str) -> None:
        t = prune(self._expression(arg).expr.type)
        emit(str(t.shape) if isinstance(t, TArr) else f"{t} (an Array type variable)", self.out)

    def cmd_explicit(self, arg: str) -> None:
        emit(show_term(self._expression(arg).expr), self.out)

    def cmd_trace(self, arg: str) -> None:
        """The expression on the reference engine, which sees the prelude and every definition
        of the session with the values they have (nothing is evaluated again)."""
        typed = self._expression(arg)
        engine = self.session.tracer(self.out)
        with deep_recursion(typed.span, EVALUATION_RECURSION_LIMIT):
            value = engine.eval_form(erase_form(typed))
        emit(self.show(typed, value), self.out)

    def cmd_set(self, arg: str) -> None:
        """``:set print full|short|rows|line`` and ``:set precision N|none``: how values print
        (``:set`` alone says)."""
        words = arg.split()
        d = self.display
        settings = {
            "full": dataclasses.replace(d, limit=None),
            "short": dataclasses.replace(d, limit=LIMIT),
            "rows": dataclasses.replace(d, rows=True),
            "line": dataclasses.replace(d, rows=False),
        }
        if not words:
            rows = "rows" if d.rows else "line"
            precision = "none" if d.precision is None else d.precision
            emit(f"print {'full' if d.limit is None else 'short'} {rows}\nprecision {precision}", self.out)
        elif len(words) == 2 and words[0] == "print" and words[1] in settings:
            self.display = settings[words[1]]
        elif len(words) == 2 and words[0] == "precision" and (words[1] == "none" or _digits(words[1])):
            self.display = dataclasses.replace(d, precision=None if words[1] == "none" else int(words[1]))
        else:
            self.fail(f"usage: :set print full|short|rows|line, or :set precision N|none (not :set {arg})")

    def cmd_load(self, arg: str) -> None:
        """Run a file as ``remora eval`` would: check it all, then run it; definitions stay."""
        path = arg.strip().strip('"')
        if not path:
            self.fail("usage: :load FILE")
            return
        try:
            text = read_source(path)
        except SourceError as exc:
            self.fail(f"cannot read {path}: {exc}")
            return
        snapshot = dict(self.session.checker.globals)
        try:
            typed = self.session.check_text(text, path)
        except BaseException:
            self._restore(snapshot)
            raise
        ran = dict(snapshot)
        for form in typed:
            try:
                self.run_checked(form)
            except BaseException:
                self._restore(ran)  # only what actually ran stays defined
                raise
            if isinstance(form, TyDefine):
                ran[form.name] = T.Global(form.key, T.form_type(form))
                self.comments[form.name] = leading_comment(form.span)
        self._restore(ran)

    def cmd_time(self, arg: str) -> None:
        """``:time EXPR``: the input run as usual (any forms), then how long checking and
        running took, as IPython's ``%time`` says it."""
        import time

        start = time.perf_counter()
        for form in self.session.forms(arg, "<repl>", self.input_line):
            self.run_form(form)
        emit(f"Wall time: {_duration(time.perf_counter() - start)}", self.out)

    def cmd_doc(self, arg: str) -> None:
        """``:doc NAME``: the type and documentation of a primitive, a definition or a keyword."""
        from .docs import describe

        name = arg.strip()
        if not name:
            self.fail("usage: :doc NAME")
            return
        text = describe(name, self.session.checker.globals, self.comments)
        if text is None:
            self.fail(f"`{name}` is not a primitive, a definition or a keyword")
        else:
            emit(text, self.out)

    def cmd_backend(self, arg: str) -> None:
        """``:backend NAME``: run from now on on another array library, with every definition
        (:mod:`remora.interfaces.backend_switch`); alone, the one in use."""
        name = arg.strip()
        if not name:
            emit(self.session.backend, self.out)
            return
        try:
            session, left = self.backends.on(name)
        except (ValueError, ImportError) as err:  # an unknown backend, or its extra is not installed
            self.fail(f"remora: {err}")
            return
        self.session = session
        if self.last_key is not None and self.last_key in left:
            self.session.checker.globals.pop("_", None)  # (a function as `_`: not carried across)
            self.last_key = None

    def _terminal(self):
        """The terminal's input (prompt_toolkit), with its history file."""
        from .terminal import TerminalInput

        path = os.environ.get("REMORA_HISTORY") or str(Path.home() / ".remora_history")
        return TerminalInput(path, PROMPT, CONTINUE, is_incomplete, self.names, COMMANDS)

    def names(self) -> dict[str, str]:
        """The names in scope with their types: keywords, primitives, then the session's
        globals (the prelude's, its definitions, ``_``)."""
        from .document import KEYWORDS, primitive_type
        from ..primitives import PRIMITIVES

        out = {k: "keyword" for k in KEYWORDS}
        out.update((name, primitive_type(name)) for name in PRIMITIVES)
        out.update((name, str(g.type)) for name, g in self.session.checker.globals.items() if not name.startswith("%"))
        return out


def _duration(seconds: float) -> str:
    """A duration as IPython's ``%time`` writes one: ``812 µs``, ``12.3 ms``, ``1.52 s``."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def _digits(text: str) -> bool:
    """Whether ``text`` is a precision: a number of digits from 0 to 17 (a Float has no more)."""
    return text.isascii() and text.isdigit() and int(text) <= 17


class InputTooLong(Exception):
    """An input line (or a multi-line input) longer than :data:`MAX_SOURCE_BYTES`: skipped."""

    def __init__(self, line: int, what: str):
        super().__init__(what)
        self.line, self.what = line, what


def main(prelude: bool = True, backend: str = "numpy") -> int:
    if sys.stdin is None:  # (standard input closed: a session with no input)
        return 0
    if hasattr(sys.stdin, "reconfigure"):
        # Bytes that are not UTF-8 reach the reader (which reports them, located) instead of
        # stopping the session with a decoding error.
        sys.stdin.reconfigure(errors="surrogateescape")
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    if interactive:
        emit("Remora — :help for commands, Ctrl-D to leave")
    return Repl(sys.stdin, sys.stdout, sys.stderr, interactive, prelude, backend).run()
