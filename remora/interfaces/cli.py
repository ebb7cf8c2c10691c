"""The ``remora`` command: a thin layer over :mod:`remora.interfaces.session`.

Exit codes (contract §3): 0 success, 1 a program error (reported as
``FILE:LINE:COL: error: …`` with a caret), 2 usage or I/O errors, 130 on Ctrl-C.

Only the standard library is imported before :func:`entry` is running: NumPy, the checker and
the prelude are loaded inside it, so Ctrl-C while they load ends quietly with 130 too.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    import argparse

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPT = 0, 1, 2, 130

#: Ctrl-Cs received since :func:`entry` began.  A KeyboardInterrupt raised inside an extension
#: module's import can reach us as some other exception (NumPy turns it into an ImportError, a
#: class body's ``__set_name__`` into a RuntimeError): this count still says what happened.
_interrupts = 0

#: set by :func:`entry`: the garbage collector is off until start-up is over (see :func:`_started`)
_collector_paused = False


def _parser() -> argparse.ArgumentParser:
    import argparse

    from .. import __version__

    class Version(argparse.Action):
        """``--version``, printed as the program's output is (argparse's own ignores a failed write)."""

        def __call__(self, parser, namespace, values, option_string=None):
            from .streams import emit

            emit(f"remora {__version__}")
            parser.exit()

    class Parser(argparse.ArgumentParser):
        """argparse's parser, except that help written to standard output goes through
        :func:`~remora.interfaces.streams.emit`: argparse ignores a failed write, which made
        ``remora --help > /dev/full`` exit 0 having printed nothing."""

        def print_help(self, file=None):
            if file is None or file is sys.stdout:
                from .streams import emit

                emit(self.format_help().rstrip("\n"))
            else:
                super().print_help(file)

    p = Parser(prog="remora", description="Remora: a typed rank-polymorphic array language.")
    p.add_argument("--version", action=Version, nargs=0, help="print the version and exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="{check,eval,repl,lsp}")
    check = sub.add_parser("check", help="parse and type-check a program; print the type of each form")
    _add_source_args(check)
    check.add_argument("--explicit", action="store_true",
                       help="print the program with every inferred t-app/i-app written out")
    ev = sub.add_parser("eval", help="check, then run a program; print the value of each expression")
    _add_source_args(ev)
    ev.add_argument("--engine", choices=["plans", "frames", "reference"], default="plans",
                    help="plans (default: each form specialised to its shapes, then run as straight-line "
                         "array calls), frames (the whole-frame engine, dynamically) or the paper's "
                         "step-by-step reference engine")
    ev.add_argument("--plan", action="store_const", const="ir",
                    help="print each form's plan before its value: its array IR, each value with its dtype "
                         "and shape")
    ev.add_argument("--plan-python", dest="plan", action="store_const", const="python",
                    help="print each form's plan as the Python source of backend calls that runs it")
    ev.add_argument("--trace", action="store_true",
                    help="print every reduction step to standard error (uses the reference engine)")
    ev.add_argument("--erased", action="store_true", help="print the erased program instead of running it")
    ev.add_argument("--backend", metavar="NAME", default="numpy",
                    help="the array library that runs the program: numpy (default), or an installed "
                         "extra's (contract §8)")
    ev.add_argument("-o", dest="output", metavar="PATH.npy", help="write the value of the last expression to PATH.npy")
    ev.add_argument("--scheduler", metavar="ADDRESS",
                    help="with --backend=dask: compute on the distributed cluster whose scheduler is at "
                         "ADDRESS (e.g. tcp://127.0.0.1:8786)")
    repl = sub.add_parser("repl", help="an interactive session")
    repl.add_argument("--no-prelude", dest="prelude", action="store_false", help="do not load the prelude")
    sub.add_parser("lsp", help="a Language Server for editors, on standard input and output (needs remora[lsp])")
    return p


def _add_source_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-prelude", dest="prelude", action="store_false", help="do not load the prelude")
    p.add_argument("-e", dest="expr", metavar="EXPR", help="a program given on the command line")
    p.add_argument("operands", nargs="*", metavar="FILE [NAME=PATH ...]",
                   help="program file (.rem; - for standard input), then inputs: NAME=PATH binds NAME to the "
                        "array in PATH (.npy, .csv or .txt)")


def _operands(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Split the operands into the program file and the NAME=PATH inputs (contract §7)."""
    if args.command not in ("check", "eval"):
        return
    operands = list(args.operands)
    args.file = None
    if args.expr is None:
        if not operands:
            p.error("a program is needed: a FILE or -e EXPR")
        args.file = operands.pop(0)
    elif operands and "=" not in operands[0]:
        p.error("give a program FILE or -e EXPR, not both")
    args.inputs = []
    from .datafiles import parse_binding

    for item in operands:
        binding = parse_binding(item)
        if binding is None:
            p.error(f"`{item}` is not an input: write NAME=PATH")
        args.inputs.append(binding)


def _source(args: argparse.Namespace) -> tuple[str, str]:
    from .streams import read_source

    if args.expr is not None:
        return args.expr, "<expr>"
    if args.file == "-":
        return sys.stdin.read().replace("\r\n", "\n"), "<stdin>"
    return read_source(args.file), args.file


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        return _interrupted()
    except BrokenPipeError:  # the reader of our output went away: nothing more is wanted
        _quiet_stdout()
        return EXIT_OK
    except Exception as exc:
        from .streams import OutputError, report

        if isinstance(exc, OutputError):
            _quiet_stdout()
            report(f"remora: cannot write to standard output: {exc.reason}")
            return EXIT_USAGE
        if _interrupts:  # (a Ctrl-C that some import turned into another exception)
            return _interrupted()
        if os.environ.get("REMORA_DEBUG"):
            raise
        # a bug in remora itself: say so plainly, without a traceback
        report(f"remora: internal error: {type(exc).__name__}: {exc} (set REMORA_DEBUG=1 for details)")
        return EXIT_ERROR


def _main(argv: Sequence[str] | None) -> int:
    from .streams import SourceError, report

    parser = _parser()
    args = parser.parse_args(argv)
    _operands(parser, args)
    if args.command == "repl":
        from .repl import main as repl_main

        _started()
        return repl_main(args.prelude)
    if args.command == "lsp":
        return _lsp()
    try:
        text, name = _source(args)
    except SourceError as exc:
        report(f"remora: cannot read {args.file}: {exc}")
        return EXIT_USAGE
    if args.command == "check":
        return _check(text, name, args.explicit, args.prelude, args.inputs)
    return _eval(text, name, args)


def _bind_inputs(session, inputs: list[tuple[str, str]]) -> None:
    """Each NAME=PATH input bound before the program is checked (a DataIOError or a located
    RemoraError in the data file propagates)."""
    from . import datafiles

    for name, path in inputs:
        array = datafiles.load(path)
        session.bind(name, session.engine.xp.from_numpy(array))


def _lsp() -> int:
    """``remora lsp``: the server, if its optional dependency (pygls) is installed."""
    from .streams import report

    try:
        from .lsp import main as lsp_main
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] not in ("pygls", "lsprotocol"):
            raise
        report(f"remora: `remora lsp` needs pygls, which is not installed: pip install 'remora[lsp]'")
        return EXIT_USAGE
    return lsp_main()


def _interrupted() -> int:
    from .streams import report

    report("remora: interrupted")
    return EXIT_INTERRUPT


def _quiet_stdout() -> None:
    """After standard output failed, stop Python failing again (and complaining) at exit."""
    from .streams import quiet

    quiet(sys.stdout)


def _check(text: str, name: str, explicit: bool = False, prelude: bool = True, inputs=()) -> int:
    from .datafiles import DataIOError
    from .session import Session, describe_form
    from ..errors import RemoraError
    from .streams import emit, report
    from ..statics.typed import show_form

    session = Session(prelude=prelude)
    _started()
    try:
        _bind_inputs(session, list(inputs))
    except DataIOError as exc:
        report(f"remora: {exc}")
        return EXIT_USAGE
    except RemoraError as err:
        report(err.report())
        return EXIT_ERROR
    try:
        for form in session.forms(text, name):
            typed = session.check_form(form)
            emit(show_form(typed) if explicit else describe_form(typed))
    except RemoraError as err:
        report(err.report())
        return EXIT_ERROR
    return EXIT_OK


def _eval(text: str, name: str, args: argparse.Namespace) -> int:
    from .session import Session
    from ..dynamics.runtime import RunConfig
    from .streams import report

    engine = "reference" if args.trace else args.engine
    run = RunConfig(stdin=sys.stdin, trace=sys.stderr if args.trace else None)
    try:
        session = Session(engine=engine, run=run, prelude=args.prelude, backend=args.backend)
    except (ValueError, ImportError) as err:  # an unknown backend, or its extra is not installed
        report(f"remora: {err}")
        return EXIT_USAGE
    with _scheduler(args) as connected:
        if not connected:
            return EXIT_USAGE
        return _run(session, text, name, args)


def _scheduler(args: argparse.Namespace):
    """A context in which ``--scheduler ADDRESS`` is this process's Dask client (yields False,
    having said why, when it cannot be)."""
    import contextlib

    from .streams import report

    @contextlib.contextmanager
    def connected():
        address = getattr(args, "scheduler", None)
        if address is None:
            yield True
            return
        if args.backend != "dask":
            report(f"remora: --scheduler names a Dask cluster; it needs --backend=dask (not {args.backend})")
            yield False
            return
        from .. import backends

        try:
            client = backends.get("dask").connect(address)
        except ImportError as err:
            report(f"remora: --scheduler needs {err.name or 'the distributed library'}: pip install 'remora[dask]'")
            yield False
            return
        except (OSError, TimeoutError, ValueError) as err:
            report(f"remora: cannot connect to the Dask scheduler at {address}: {err}")
            yield False
            return
        try:
            yield True
        finally:
            client.close()

    return connected()


def _run(session, text: str, name: str, args: argparse.Namespace) -> int:
    """Check, then run (or show erased) every form: each expression's value printed as it comes."""
    from ..erasure.erase import erase_form
    from ..erasure.erased import show_erased
    from ..errors import RemoraError
    from ..errors import located_at
    from .session import show_result
    from .streams import emit, flush, report
    from ..statics.typed import TyExprForm

    _started()
    from .datafiles import DataIOError, save

    if args.output is not None and not args.output.endswith(".npy"):
        report(f"remora: -o writes a .npy file: `{args.output}` does not end in .npy")
        return EXIT_USAGE
    last = None
    try:
        _bind_inputs(session, args.inputs)
        typed = session.check_text(text, name)
        if args.erased:
            for form in typed:
                emit(show_erased(erase_form(form)))
            return EXIT_OK
        for form in typed:
            value = session.evaluate(form)
            if args.plan:
                emit(_plan_text(session, form, args.plan))
            if isinstance(form, TyExprForm):
                with located_at(form.span):  # (a Dask value is computed here)
                    emit(show_result(form, value))
                last, last_span = value, form.span
        if args.output is not None:
            if last is None:
                report("remora: -o: the program has no expression whose value to write")
                return EXIT_USAGE
            with located_at(last_span):
                save(args.output, last, session.engine.xp)
    except DataIOError as exc:
        flush()
        report(f"remora: {exc}")
        return EXIT_USAGE
    except RemoraError as err:
        flush()
        report(err.report())
        return EXIT_ERROR
    return EXIT_OK


def _plan_text(session, form, how: str = "ir") -> str:
    """What ``--plan`` shows for a form just evaluated: its plan's source, or why it has none."""
    from ..plans import PLANS

    where = f";; {form.span.source.name}:{form.span.line}:{form.span.col}"
    plans = PLANS.plans(session.last_erased) if session.engine_name == "plans" else []
    if not plans:
        why = PLANS.last_refusal if session.engine_name == "plans" else f"the {session.engine_name} engine makes no plans"
        return f"{where}: evaluated dynamically ({why})"
    plan = plans[-1]
    text = plan.source if how == "python" or plan.ir is None else plan.ir.text()
    return f"{where}: plan\n" + text.rstrip("\n")


def _started() -> None:
    """Start-up is over.  What it made — modules, classes, the prelude — lives as long as the
    process, so the garbage collector is frozen out of it: collections during start-up (paused by
    :func:`entry`) and at exit would only walk it again and again, a tenth of what a short
    ``remora eval`` costs.  Collection then resumes for what the program makes."""
    global _collector_paused
    if _collector_paused:
        _collector_paused = False
        gc.freeze()
        gc.enable()


def entry() -> None:
    """Console-script entry point.  Ctrl-C at any moment from here on — imports included — ends
    with status 130 and one line; output still buffered is written (or its failure reported) now."""
    global _collector_paused
    if gc.isenabled():  # (until start-up is over: see _started)
        gc.disable()
        _collector_paused = True
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # (not where SIGINT is ignored)
        signal.signal(signal.SIGINT, _on_interrupt)
        sys.unraisablehook = _redeliver(sys.unraisablehook)
    try:
        try:
            code = main()
        except SystemExit as exc:  # (argparse: --help, --version and usage errors)
            code = exc.code if isinstance(exc.code, int) else (EXIT_OK if exc.code is None else EXIT_USAGE)
        if code != EXIT_INTERRUPT:
            code = _flushed(code)
    except KeyboardInterrupt:
        code = _interrupted()
    sys.exit(code)


def _on_interrupt(signum, frame) -> None:
    """Python's own Ctrl-C handler, counting."""
    global _interrupts
    _interrupts += 1
    raise KeyboardInterrupt


def _redeliver(hook):
    """``sys.unraisablehook`` that delivers a swallowed Ctrl-C again.  Python runs a signal handler
    at whatever bytecode comes next — possibly inside a weakref callback or a ``__del__`` (the
    import system's module-lock callbacks run during every import), where the KeyboardInterrupt
    it raises is printed as "Exception ignored" and dropped: the program then ran on to its end.
    SIGINT sent again from another thread has the handler run once that callback has returned
    (sent from the hook itself, the handler would run in the hook, and be ignored there too)."""

    def unraisable(args) -> None:
        if args.exc_type is not None and issubclass(args.exc_type, KeyboardInterrupt):
            import _thread  # (threading's start would wait for the thread, and receive the signal)

            _thread.start_new_thread(os.kill, (os.getpid(), signal.SIGINT))
            return
        hook(args)

    return unraisable


def _flushed(code: int) -> int:
    """``code``, or the I/O error's status if standard output cannot take what is still buffered."""
    from .streams import OutputError, flush, report

    try:
        flush()
    except BrokenPipeError:
        _quiet_stdout()
    except OutputError as exc:
        _quiet_stdout()
        report(f"remora: cannot write to standard output: {exc.reason}")
        return EXIT_USAGE
    return code


if __name__ == "__main__":
    entry()
