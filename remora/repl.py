"""``remora repl``: an interactive session over the same :class:`~remora.driver.Session`.

Input is read until its brackets balance, so definitions can span lines.  Each
expression's value is printed; definitions persist.  ``:``-commands inspect
without evaluating (``:type``, ``:shape``, ``:explicit``), load files, and trace
evaluation with the reference engine.  Errors print exactly as the command line
prints them and never end the session; Ctrl-C abandons the current input,
Ctrl-D (end of input) leaves.  Without a terminal (piped input) there are no
prompts, so the output is only values and errors.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import IO, Callable

from . import syntax as S
from .driver import Session, describe_form, show_result
from .erase import erase_form
from . import typed as T
from .errors import RemoraError, RemoraSyntaxError, Source, Span
from .reader import _scan
from .reference import Reference
from .runtime import RunConfig
from .typed import TyDefine, TyExprForm, show_term
from .types import TArr, prune

PROMPT, CONTINUE = "remora> ", "...     "
HELP = """\
Enter Remora expressions or (define ...) forms; brackets may span lines.
  :type EXPR      the type of EXPR (not evaluated)
  :shape EXPR     the shape its type gives EXPR
  :explicit EXPR  EXPR with every inferred t-app/i-app written out
  :trace EXPR     evaluate EXPR step by step with the reference engine
  :load FILE      run a program file; its definitions stay
  :help           this text
  :quit           leave (Ctrl-D does too)
Ctrl-C abandons the current input."""


def incomplete(text: str) -> bool:
    """Whether ``text`` still has open brackets (so the REPL should read another line)."""
    try:
        _scan(Source("<repl>", text))
    except RemoraSyntaxError as err:
        return err.message.startswith("unclosed")
    return False


class Repl:
    """One interactive session; ``interactive`` decides prompts, readline and history."""

    def __init__(self, stdin: IO[str], stdout: IO[str], stderr: IO[str], interactive: bool, prelude: bool = True):
        self.stdin, self.out, self.err = stdin, stdout, stderr
        self.interactive = interactive
        self.prelude = prelude
        self.session = Session(run=RunConfig(stdin=stdin), prelude=prelude)
        self.definitions: list = []  # erased definitions, replayed for :trace
        self.commands: dict[str, Callable[[str], None]] = {
            "type": self.cmd_type,
            "shape": self.cmd_shape,
            "explicit": self.cmd_explicit,
            "trace": self.cmd_trace,
            "load": self.cmd_load,
            "help": lambda arg: print(HELP, file=self.out),
        }

    # --- reading ------------------------------------------------------------------

    def read_line(self, prompt: str) -> str | None:
        if self.interactive:
            try:
                return input(prompt)
            except EOFError:
                print(file=self.out)
                return None
        line = self.stdin.readline()
        return None if line == "" else line.rstrip("\n")

    def read_input(self) -> str | None:
        """One complete input (brackets balanced), or None at end of input."""
        lines: list[str] = []
        while True:
            line = self.read_line(PROMPT if not lines else CONTINUE)
            if line is None:
                return "\n".join(lines) if lines else None
            lines.append(line)
            text = "\n".join(lines)
            if not incomplete(text):
                return text

    def run(self) -> int:
        history = self._start_history() if self.interactive else None
        try:
            while True:
                try:
                    text = self.read_input()
                except KeyboardInterrupt:
                    print("^C" if self.interactive else "", file=self.out)
                    continue
                if text is None:
                    return 0
                if text.strip() in (":quit", ":q"):
                    return 0
                try:
                    self.handle(text)
                except KeyboardInterrupt:
                    print("interrupted", file=self.err)
        finally:
            if history is not None:
                history()

    # --- evaluating ------------------------------------------------------------------

    def handle(self, text: str) -> None:
        """Run one complete input: a :command, or forms to check and evaluate."""
        stripped = text.strip()
        if not stripped or stripped.startswith(";"):
            return
        try:
            if stripped.startswith(":"):
                name, _, arg = stripped[1:].partition(" ")
                command = self.commands.get(name)
                if command is None:
                    print(f"unknown command :{name} (try :help)", file=self.err)
                else:
                    command(arg.strip())
                return
            for form in self.session.forms(text, "<repl>"):
                self.run_form(form)
        except RemoraError as err:
            self.out.flush()
            print(err.report(), file=self.err)
        except RecursionError:
            print("<repl>: error: input nested too deeply", file=self.err)

    def run_form(self, form: S.TopForm) -> None:
        snapshot = dict(self.session.checker.globals)
        try:
            typed = self.session.check_form(form)
            self.run_checked(typed)
        except BaseException:
            self._restore(snapshot)
            raise

    def run_checked(self, typed) -> None:
        value = self.session.evaluate(typed)
        if isinstance(typed, TyExprForm):
            print(show_result(typed, value), file=self.out, flush=True)
        else:
            self.definitions.append(erase_form(typed))

    def _restore(self, snapshot: dict) -> None:
        """Forget definitions that were checked but never ran: the checker and engine stay in step."""
        self.session.checker.globals.clear()
        self.session.checker.globals.update(snapshot)

    def _expression(self, arg: str):
        """The typed expression of a command's argument (checked, not evaluated)."""
        forms = self.session.forms(arg, "<repl>")
        if len(forms) != 1 or not isinstance(forms[0], S.ExprForm):
            span = forms[0].span if forms else Span(Source("<repl>", ":" + arg), 1, 1, 1, 2)
            raise RemoraSyntaxError("expected one expression after the command", span)
        snapshot = dict(self.session.checker.globals)
        try:
            return self.session.check_form(forms[0])
        finally:
            self._restore(snapshot)

    def cmd_type(self, arg: str) -> None:
        print(describe_form(self._expression(arg)), file=self.out)

    def cmd_shape(self, arg: str) -> None:
        t = prune(self._expression(arg).expr.type)
        print(t.shape if isinstance(t, TArr) else f"{t} (an Array type variable)", file=self.out)

    def cmd_explicit(self, arg: str) -> None:
        print(show_term(self._expression(arg).expr), file=self.out)

    def cmd_trace(self, arg: str) -> None:
        typed = self._expression(arg)
        engine = Reference(RunConfig(stdin=self.stdin, trace=None))
        for definition in self.definitions:  # the reference engine needs the session's definitions
            engine.eval_form(definition)
        engine.run.trace = self.out
        value = engine.eval_form(erase_form(typed))
        print(show_result(typed, value), file=self.out)

    def cmd_load(self, arg: str) -> None:
        """Run a file as ``remora eval`` would: check it all, then run it; definitions stay."""
        path = arg.strip().strip('"')
        if not path:
            print("usage: :load FILE", file=self.err)
            return
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            print(f"cannot read {path}: {exc.strerror or exc}", file=self.err)
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
                ran[form.name] = T.form_type(form)
        self._restore(ran)

    def _start_history(self):
        """Line editing and a history file, where readline exists; returns the saver."""
        try:
            import readline
        except ImportError:
            return None
        path = os.environ.get("REMORA_HISTORY") or str(Path.home() / ".remora_history")
        try:
            readline.read_history_file(path)
        except OSError:
            pass

        def save() -> None:
            try:
                readline.write_history_file(path)
            except OSError:
                pass

        return save


def main(prelude: bool = True) -> int:
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    if interactive:
        print("Remora — :help for commands, Ctrl-D to leave", file=sys.stdout)
    return Repl(sys.stdin, sys.stdout, sys.stderr, interactive, prelude).run()
