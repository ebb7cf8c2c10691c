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

from .streams import OutputError, report  # (the standard library only, as this module)

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
    check = sub.add_parser("check", help="parse and type-check programs; print the type of each form, or every error")
    _add_source_args(check, "PATH [PATH ...] [NAME=PATH ...]",
                     "program files (.rem; - for standard input) or directories (every *.rem in them), then "
                     "inputs: NAME=PATH binds NAME to the array in PATH (.npy, .csv or .txt)")
    check.add_argument("--explicit", action="store_true",
                       help="print the program with every inferred t-app/i-app written out")
    check.add_argument("--output-format", choices=["text", "json"], default="text",
                       help="text (default: each error as FILE:LINE:COL: error: ... on standard error) or json "
                            "(one JSON array of every error on standard output)")
    ev = sub.add_parser("eval", help="check, then run a program; print the value of each expression")
    _add_source_args(ev, "FILE [NAME=PATH ...]",
                     "program file (.rem; - for standard input), then inputs: NAME=PATH binds NAME to the "
                     "array in PATH (.npy, .csv or .txt)")
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
                    help="print every reduction step to standard error (runs the reference engine, on the "
                         "backend --backend names)")
    ev.add_argument("--erased", action="store_true", help="print the erased program instead of running it")
    ev.add_argument("--backend", metavar="NAME", default="numpy", help=BACKEND_HELP)
    ev.add_argument("--print", dest="print_mode", choices=["short", "full"], default="short",
                    help="at a terminal, values are laid out for reading: rows wrapped to its width and, with "
                         "short (the default), values of more than 1,000 atoms summarised with …; full prints "
                         "every atom. Written to a pipe or a file a value is always whole, on one line")
    ev.add_argument("--precision", metavar="N", type=_precision,
                    help="at a terminal, print Floats with at most N digits after the point")
    ev.add_argument("-o", dest="output", metavar="PATH.npy", help="write the value of the last expression to PATH.npy")
    ev.add_argument("--scheduler", metavar="ADDRESS",
                    help="with --backend=dask: compute on the distributed cluster whose scheduler is at "
                         "ADDRESS (e.g. tcp://127.0.0.1:8786)")
    repl = sub.add_parser("repl", help="an interactive session")
    repl.add_argument("--no-prelude", dest="prelude", action="store_false", help="do not load the prelude")
    repl.add_argument("--backend", metavar="NAME", default="numpy", help=BACKEND_HELP + " (:backend NAME changes it)")
    sub.add_parser("lsp", help="a Language Server for editors, on standard input and output (needs remora[lsp])")
    return p


#: what ``--backend`` says (the backends, and the extra each needs)
BACKEND_HELP = ("the array library that runs the program: numpy (the default), jax (needs pip install "
                "'remora[jax]') or dask (needs pip install 'remora[dask]')")


def _precision(text: str) -> int:
    """``--precision N``: a number of digits from 0 to 17 (a Float has no more)."""
    import argparse

    if not (text.isascii() and text.isdigit() and int(text) <= 17):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of digits from 0 to 17")
    return int(text)


def _add_source_args(p: argparse.ArgumentParser, operands: str, help: str) -> None:
    p.add_argument("--no-prelude", dest="prelude", action="store_false", help="do not load the prelude")
    p.add_argument("-e", dest="expr", metavar="EXPR", help="a program given on the command line")
    p.add_argument("operands", nargs="*", metavar=operands, help=help)


def _operands(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Split the operands into the programs and the NAME=PATH inputs (contract §7); an operand
    that fits neither is a usage error that says what was probably meant."""
    if args.command not in ("check", "eval"):
        return
    from .datafiles import parse_binding

    args.programs, args.inputs = [], []
    for item in args.operands:
        if "=" in item and not os.path.exists(item):
            binding = parse_binding(item)
            if binding is None:
                p.error(_not_a_binding(item))
            args.inputs.append(binding)
        elif args.expr is not None or args.programs and (args.command == "eval" or _forgot_the_path(item)):
            p.error(_not_a_program(item, args))
        else:
            args.programs.append(item)
    if args.expr is None and not args.programs:
        p.error("a program is needed: a FILE or -e EXPR" if args.command == "eval"
                else "a program is needed: FILE ..., a directory of .rem files, or -e EXPR")
    args.file = args.programs[0] if args.programs else None
    if args.command == "check" and args.explicit and args.output_format == "json":
        p.error("--explicit prints a program; it has no JSON form (leave out one of them)")


def _forgot_the_path(item: str) -> bool:
    """Whether an operand after the program is a data name whose ``=PATH`` was left out: it
    reads as a name and not as a path (no ``/`` or ``.``), and no such file exists."""
    from .datafiles import parse_binding

    return parse_binding(f"{item}=PATH") is not None and not any(c in item for c in "/.\\") and not os.path.exists(item)


def _not_a_binding(item: str) -> str:
    name, _, path = item.partition("=")
    if not path:
        return f"`{item}` gives no file: write {name or 'NAME'}=PATH to bind {name or 'NAME'} to the array in PATH"
    return f"`{item}` is not an input: `{name}` is not a name a program can use; write NAME=PATH"


def _not_a_program(item: str, args: argparse.Namespace) -> str:
    """Why an operand after the program (or after -e EXPR) is refused, and what to write."""
    if _forgot_the_path(item):
        return f"`{item}` is not an input: write {item}=PATH to bind the data name {item} to the array in PATH"
    if args.expr is not None:
        return f"give a program FILE or -e EXPR, not both (`{item}` is a program file; inputs are NAME=PATH)"
    return (f"eval runs one program: `{item}` comes after the program `{args.programs[0]}` (to check several "
            f"programs, remora check {args.programs[0]} {item}; to bind data, NAME=PATH)")


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
    except OutputError as exc:
        _quiet_stdout()
        report(f"remora: cannot write to standard output: {exc.reason}")
        return EXIT_USAGE
    except Exception as exc:  # the command line's one "internal error" handler: a bug in remora
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
        try:
            return repl_main(args.prelude, args.backend)
        except (ValueError, ImportError) as err:  # an unknown backend, or its extra is not installed
            report(f"remora: {err}")
            return EXIT_USAGE
    if args.command == "lsp":
        return _lsp()
    if args.command == "check":
        return _check(args)
    try:
        text, name = _source(args)
    except SourceError as exc:
        report(f"remora: cannot read {args.file}: {exc}")
        return EXIT_USAGE
    return _eval(text, name, args)


def _bind_inputs(session, inputs: list[tuple[str, str]]) -> None:
    """Each NAME=PATH input bound before the program is checked (a DataIOError or a located
    RemoraError in the data file propagates)."""
    _bind_arrays(session, _load_inputs(inputs))


def _load_inputs(inputs: list[tuple[str, str]]) -> list[tuple[str, object]]:
    """The arrays of the NAME=PATH inputs, by name."""
    from . import datafiles

    return [(name, datafiles.load(path)) for name, path in inputs]


def _bind_arrays(session, arrays: list[tuple[str, object]]) -> None:
    for name, array in arrays:
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


def _check(args: argparse.Namespace) -> int:
    """``remora check``: see :mod:`remora.interfaces.check_command`."""
    from . import check_command as C
    from ..errors import RemoraError
    from .datafiles import DataIOError
    from .session import Session, describe_form, load_prelude
    from .streams import emit, report
    from ..statics.typed import show_form

    json = args.output_format == "json"
    if args.expr is not None:
        sources = [("<expr>", lambda: args.expr)]
    else:
        sources = [("<stdin>" if f == "-" else f, C.read_program(f)) for p in args.programs for f in C.program_files(p)]
        if not sources:
            report(f"remora: no .rem files in {' '.join(args.programs)}")
            return EXIT_USAGE
    several = args.expr is None and (len(args.programs) > 1 or os.path.isdir(args.programs[0]))
    if args.explicit and several:
        report("remora: --explicit prints one program: give one FILE")
        return EXIT_USAGE
    if args.prelude:
        load_prelude()
    _started()
    try:
        arrays = _load_inputs(list(args.inputs))
    except DataIOError as exc:
        report(f"remora: {exc}")
        return EXIT_USAGE
    except RemoraError as err:
        emit(C.as_json([err])) if json else report(err.report())
        return EXIT_ERROR

    def session():
        made = Session(prelude=args.prelude)
        _bind_arrays(made, arrays)
        return made

    show = None if json or several else show_form if args.explicit else describe_form
    outcome = C.check_programs(
        sources, session, show, emit,
        report=(lambda err: None) if json else (lambda err: report(err.report())),
        unreadable=lambda name, exc: report(f"remora: cannot read {name}: {exc}"),
    )
    if json:
        emit(C.as_json(outcome.errors))
    else:
        line = C.summary(outcome, several, expression=args.expr is not None)
        if line is not None:
            report(line)
    return outcome.status


def _eval(text: str, name: str, args: argparse.Namespace) -> int:
    from .session import Session
    from ..dynamics.runtime import RunConfig
    from .streams import report

    engine = "reference" if args.trace else args.engine
    if engine == "reference" and args.backend != "numpy":
        # (the reference engine steps through the paper's rules on NumPy: it would show, and
        # compute, something other than what the backend asked for runs)
        what = "--trace steps through" if args.trace else "--engine=reference is"
        report(f"remora: {what} the paper's reference engine, which computes on NumPy only: it cannot run "
               f"on --backend={args.backend} (leave out one of them)")
        return EXIT_USAGE
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
    from .layout import for_stream, show
    from .progress import running
    from .streams import emit, flush, report
    from ..statics.typed import TyExprForm, form_type

    _started()
    from .datafiles import DataIOError, save

    if args.output is not None and not args.output.endswith(".npy"):
        report(f"remora: -o writes a .npy file: `{args.output}` does not end in .npy")
        return EXIT_USAGE
    last = None
    display = for_stream(sys.stdout, full=args.print_mode == "full", precision=args.precision)
    try:
        _bind_inputs(session, args.inputs)
        typed = session.check_text(text, name)
        if args.erased:
            for form in typed:
                emit(show_erased(erase_form(form)))
            return EXIT_OK
        for form in typed:
            text = None
            where = f"{form.span.source.name}:{form.span.line}:{form.span.col}"
            with running(where, None if args.trace else sys.stderr, session.engine.xp):  # (a trace shows progress)
                value = session.evaluate(form)
                if isinstance(form, TyExprForm):
                    with located_at(form.span):  # (a Dask value is computed here)
                        text = show(value, form_type(form), display)
            if args.plan:
                emit(_plan_text(session, form, args.plan))
            if text is not None:
                emit(text)
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
    xp = session.engine.xp
    if xp.compiles and session.engine_name == "frames":  # (compiled from its plan: spec D48)
        plans, why = xp.plans(session.last_erased)
        if not plans:
            return f"{where}: {why}"
    else:
        plans = PLANS.plans(session.last_erased) if session.engine_name == "plans" else []
        why = PLANS.last_refusal if session.engine_name == "plans" else f"the {session.engine_name} engine makes no plans"
    if not plans:
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
