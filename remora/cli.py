"""The ``remora`` command: a thin layer over :mod:`remora.driver`.

Exit codes (contract §3): 0 success, 1 a program error (reported as
``FILE:LINE:COL: error: …`` with a caret), 2 usage or I/O errors, 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from .driver import Session, describe_form
from .errors import RemoraError

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPT = 0, 1, 2, 130


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="remora", description="Remora: a typed rank-polymorphic array language.")
    sub = p.add_subparsers(dest="command", required=True, metavar="{check,eval,repl}")
    check = sub.add_parser("check", help="parse and type-check a program; print the type of each form")
    _add_source_args(check)
    return p


def _add_source_args(p: argparse.ArgumentParser) -> None:
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
        try:
            text, name = _source(args)
        except (OSError, UnicodeDecodeError) as exc:
            print(f"remora: cannot read {args.file}: {getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
            return EXIT_USAGE
        return _check(text, name)
    except KeyboardInterrupt:
        print("remora: interrupted", file=sys.stderr)
        return EXIT_INTERRUPT


def _check(text: str, name: str) -> int:
    session = Session()
    try:
        for form in session.forms(text, name):
            print(describe_form(session.check_form(form)), flush=True)
    except RemoraError as err:
        print(err.report(), file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    entry()
