"""The ``remora`` command: a thin layer over :mod:`remora.driver`.

Exit codes (contract §3): 0 success, 1 a program error (reported as
``FILE:LINE:COL: error: …`` with a caret), 2 usage or I/O errors, 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from .driver import Session, describe_form, show_result
from .erase import erase_form
from .erased import show_erased
from .errors import RemoraError
from .runtime import RunConfig
from .typed import TyExprForm, show_form

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPT = 0, 1, 2, 130


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="remora", description="Remora: a typed rank-polymorphic array language.")
    sub = p.add_subparsers(dest="command", required=True, metavar="{check,eval,repl}")
    check = sub.add_parser("check", help="parse and type-check a program; print the type of each form")
    _add_source_args(check)
    check.add_argument("--explicit", action="store_true",
                       help="print the program with every inferred t-app/i-app written out")
    ev = sub.add_parser("eval", help="check, then run a program; print the value of each expression")
    _add_source_args(ev)
    ev.add_argument("--engine", choices=["frames", "reference"], default="frames",
                    help="whole-frame engine (default) or the paper's step-by-step reference engine")
    ev.add_argument("--trace", action="store_true",
                    help="print every reduction step to standard error (uses the reference engine)")
    ev.add_argument("--erased", action="store_true", help="print the erased program instead of running it")
    repl = sub.add_parser("repl", help="an interactive session")
    repl.add_argument("--no-prelude", dest="prelude", action="store_false", help="do not load the prelude")
    return p


def _add_source_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-prelude", dest="prelude", action="store_false", help="do not load the prelude")
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("file", nargs="?", help="program file (.rem)")
    group.add_argument("-e", dest="expr", metavar="EXPR", help="a program given on the command line")


def _source(args: argparse.Namespace) -> tuple[str, str]:
    if args.expr is not None:
        return args.expr, "<expr>"
    with open(args.file, encoding="utf-8") as f:
        return f.read(), args.file


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "repl":
            from .repl import main as repl_main

            return repl_main(args.prelude)
        try:
            text, name = _source(args)
        except (OSError, UnicodeDecodeError) as exc:
            print(f"remora: cannot read {args.file}: {getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
            return EXIT_USAGE
        if args.command == "check":
            return _check(text, name, args.explicit, args.prelude)
        return _eval(text, name, args)
    except KeyboardInterrupt:
        print("remora: interrupted", file=sys.stderr)
        return EXIT_INTERRUPT
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_OK
    except Exception as exc:  # a bug in remora itself: say so plainly, without a traceback
        if os.environ.get("REMORA_DEBUG"):
            raise
        print(f"remora: internal error: {type(exc).__name__}: {exc} (set REMORA_DEBUG=1 for details)", file=sys.stderr)
        return EXIT_ERROR


def _quiet_stdout() -> None:
    """After the reader of our output went away, stop Python complaining at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


def _check(text: str, name: str, explicit: bool = False, prelude: bool = True) -> int:
    session = Session(prelude=prelude)
    try:
        for form in session.forms(text, name):
            typed = session.check_form(form)
            print(show_form(typed) if explicit else describe_form(typed), flush=True)
    except RemoraError as err:
        print(err.report(), file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


def _eval(text: str, name: str, args: argparse.Namespace) -> int:
    engine = "reference" if args.trace else args.engine
    run = RunConfig(stdin=sys.stdin, trace=sys.stderr if args.trace else None)
    session = Session(engine=engine, run=run, prelude=args.prelude)
    try:
        typed = session.check_text(text, name)
        if args.erased:
            for form in typed:
                print(show_erased(erase_form(form)))
            return EXIT_OK
        for form in typed:
            value = session.evaluate(form)
            if isinstance(form, TyExprForm):
                print(show_result(form, value), flush=True)
    except RemoraError as err:
        sys.stdout.flush()
        print(err.report(), file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    entry()
