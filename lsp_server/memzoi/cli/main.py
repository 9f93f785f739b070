"""``memzoi`` entry point: builds the argument parser from the command modules and runs one command.

Exit codes: 0 success, 1 findings of error severity or a refused operation, 2 usage errors (also: not inside a
project). Errors are one line on stderr naming the file and what to do (``{"error": {"code", "message"}}`` on
stdout with ``--json``): an ``OSError`` from any command is turned into that line here, in one place, and so is a
failure of the runtime directory (a full disk, a read-only mount, a damaged database: ``RuntimeStateError``) and an
unexpected exception (an internal error, exit 1; ``--debug`` logs its stack on stderr without any message or
value). The conventions every command follows are in :mod:`memzoi.cli._common`.
"""

from __future__ import annotations

import argparse
import atexit
import errno
import os
import sys
from importlib import import_module

from .. import __version__

TYPE_CHECKING = False  # typing itself costs `memzoi --version` 3 ms; mypy reads this name as true
if TYPE_CHECKING:
    from typing import NoReturn

#: Command modules, in help order (``-`` in a command name is ``_`` in its module's). Each has
#: ``register(subparsers)`` which sets ``func`` on its parser.
COMMANDS = [
    "init",
    "check",
    "upgrade",
    "proposals",
    "local",
    "checkpoint",
    "session-end",
    "import",
    "capture",
    "supersede",
    "tombstone",
    "materialize",
    "reattest",
    "undo",
    "history",
    "reconcile",
    "resident",
    "rebuild",
    "search",
    "context",
    "handoff",
    "precheck",
    "expiry",
    "maintenance",
    "safety",
    "integrate",
    "export",
    "mcp",
    "doctor",
    "explain",
    "schema",
    "completion",
]

#: Commands whose module name differs from the command's (``import`` is a Python keyword).
_MODULES = {"import": "import_plan"}
#: ``entry``: the process runs :func:`entry`, and ends when :func:`main` returns; ``at_once``: the command
#: :func:`main` ran last may end it at once (a command opts in with ``end_at_once=True`` in its parser's defaults).
_ENDING = {"entry": False, "at_once": False}


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage errors (``unrecognized arguments: …``, ``invalid choice: …``) never echo what
    a secret detector flags in the arguments they quote (:func:`memzoi.safety.redact.scrub`); its sub-parsers are
    of this class too (argparse makes them of the parent's class)."""

    def error(self, message: str) -> NoReturn:
        from ..safety.redact import scrub  # noqa: PLC0415 lazy: start-up - only on a usage error

        super().error(scrub(message))


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser with every command registered, or only the command ``only`` (imports stay lazy, so
    ``memzoi check`` does not pay for the lifecycle modules)."""
    parser = _Parser(
        prog="memzoi",
        description="Review Memzoi repository memory: check records and proposal packets, and manage their lifecycle.",
        epilog="Run `memzoi COMMAND --help` for a command's options, examples and exit codes.",
    )
    parser.add_argument("--version", action="version", version=f"memzoi {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="log on stderr, with the stack of internal errors (never file contents)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        if only is None or name == only:
            import_module(f"{__package__}.{_MODULES.get(name, name.replace('-', '_'))}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code (also used as ``sys.exit`` status by the console script)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    # pydantic looks for plugins (its observability hooks) by reading the metadata of every installed distribution
    # when the first model is built (some 25 ms of CPU in a one-file `check`), for hooks this command has no use
    # for. A value the user set is kept (https://docs.pydantic.dev/latest/concepts/plugins/#disabling-plugins).
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    if argv == ["--version"]:  # answered before argparse and its help formatter (which imports shutil) load
        print(f"memzoi {__version__}")
        return 0
    first = _command_word(argv)
    if first is None and "--version" in argv:
        only: str | None = ""  # `memzoi --debug --version` imports no command module either
    else:
        only = first if first in COMMANDS else None
    parser = build_parser(only)
    args = parser.parse_args(argv)
    args.given = argv  # what the caller typed, never echoed where it holds a secret (`_common.unechoed`)
    _ENDING["at_once"] = bool(getattr(args, "end_at_once", False))
    # what the command may rely on: its process ends at once when it returns (it need not free what it made)
    args.ending = _ENDING["at_once"] and _ENDING["entry"]
    _total_output()
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    if args.debug:
        import logging  # noqa: PLC0415 lazy: start-up - only here: `memzoi --version` and every ordinary run skip its import

        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr, format="memzoi: %(name)s: %(message)s")
    if getattr(args, "project", "required") == "required":
        from ._common import require_project  # noqa: PLC0415 lazy: start-up

        root = require_project(args)  # before anything else, so nothing is created outside a project
        if root is None:
            return 2
        args.root = str(root)
    if hasattr(args, "actor"):  # a command that makes changes: its ledgered changes keep the index current
        from ..lifecycle.index_sync import install  # noqa: PLC0415 lazy: start-up

        install()
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except OSError as err:
        return _fail(args, *os_error(err))
    except Exception as err:  # a bug: one line (and the stack with --debug), never a traceback
        state = _runtime_state(err)
        if state is not None:
            return _fail(args, *state)
        from ..judge.barrier import log_internal_error  # noqa: PLC0415 lazy: start-up

        log_internal_error(err)
        return _fail(
            args,
            "internal_error",
            f"internal error ({type(err).__name__}); this is a bug in memzoi-lsp: "
            "please report it with the output of the same command run with `memzoi --debug`",
        )


def _command_word(argv: list[str]) -> str | None:
    """The command ``argv`` names: its first word that is not an option (the top level's options are flags)."""
    return next((a for a in argv if not a.startswith("-")), None)


def entry() -> NoReturn:
    """The ``memzoi`` console script and ``python -m memzoi``: :func:`main`, then the process ends with its exit
    code; a command that opts in (``end_at_once``: ``check``, ``search``, ``rebuild``) ends at once
    (:func:`end_at_once`), and is told so (``args.ending``). For ``search``, find starts listing the project first
    (:func:`list_ahead`)."""
    _ENDING["entry"] = True
    argv = sys.argv[1:]
    early = _command_word(argv) == "search"
    if early:  # before find starts: a SIGTERM from then on ends the process through the `finally` below
        _exit_on_sigterm()
    try:
        list_ahead(argv)
        code = main(argv)
    finally:
        if early:  # a listing the command did not take (another root, a usage error, --help) is killed and reaped
            from ..stores.findstart import drop_early  # noqa: PLC0415 lazy: start-up

            drop_early()
    if _ENDING["at_once"]:
        end_at_once(code)
    sys.exit(code)


def _exit_on_sigterm() -> None:
    """Make SIGTERM end the process through ``SystemExit`` (exit code 143) where it would kill it outright, so
    that the ``finally`` clauses run and the find started for the command (:func:`list_ahead`, or the command's own)
    is killed and reaped: killed outright, the process would leave it running orphaned until it has listed."""
    import signal  # noqa: PLC0415 lazy: start-up (subprocess, imported by then, has loaded it)

    from ..stores.findstart import terminated  # noqa: PLC0415 lazy: start-up

    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, terminated)


def list_ahead(argv: list[str]) -> None:
    """Where ``argv`` runs ``search``, start GNU find over the project's files at once
    (:func:`memzoi.stores.findstart.start_early`), before argparse and the command's imports, which then run while find
    lists and stats (about 0.18 s of CPU at 50,000 records; issue 29). The root is found by the rule the dispatcher uses
    (:func:`memzoi.judge.projectroot.root_of`, as :func:`memzoi.cli._common.project_root`), from the last ``--root`` of
    ``argv`` if any; the command takes the listing only where its own root is the same, and it is discarded otherwise,
    so a wrong guess here costs CPU, never a wrong result (the caller calls :func:`memzoi.stores.findstart.drop_early`
    on the way out). Never raises."""
    if _command_word(argv) != "search":
        return
    root = None
    for i, arg in enumerate(argv):
        if arg == "--root" and i + 1 < len(argv):
            root = argv[i + 1]
        elif arg.startswith("--root="):
            root = arg.partition("=")[2]
    from ..judge.projectroot import root_of  # noqa: PLC0415 lazy: start-up
    from ..stores.findstart import start_early  # noqa: PLC0415 lazy: start-up

    try:
        start_early(root_of(root))
    except (OSError, ValueError):  # no current folder, a NUL in --root: the command reports it
        pass


def end_at_once(code: int) -> None:
    """End the process with ``code`` without the interpreter's finalization, which frees every object and module one
    by one after the command is done (some 40 ms of wall and CPU after a check of 11,000 files, all of it after the
    report is out). Nothing is lost by it: the output streams are flushed and the exit handlers
    (:mod:`atexit`) run first, and it is only done where no other thread runs and stdout flushes. Otherwise it
    returns, and the caller exits as usual (a broken pipe then ends as it did before). Commands that keep
    databases open or leave threads behind do not opt in."""
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() != 1:
        return
    try:
        sys.stdout.flush()
    except (OSError, ValueError):  # a closed or broken stdout: the interpreter's own exit reports it as before
        return
    atexit._run_exitfuncs()  # runs each handler once and clears them (logging's flush among them)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass  # what an exit handler wrote and cannot be written is lost either way
    os._exit(code)


def _total_output() -> None:
    """Let stdout and stderr print any string: a lone surrogate (a YAML ``\\uD800`` escape a record quotes, a file
    name that is not UTF-8) is written as its ``\\u`` escape instead of stopping the report half-way."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # a stream that cannot be reconfigured keeps its own error handler
                pass


#: errno → (error code, what to do), for the errors a file operation meets in practice.
_OS_ERRORS: dict[int, tuple[str, str]] = {
    errno.ENAMETOOLONG: (
        "name_too_long",
        "the name is longer than the file system allows; use the file id of an "
        "existing file (`memzoi proposals list`, `memzoi history`)",
    ),
    errno.EACCES: ("permission_denied", "check the permissions of the file and its folders"),
    errno.EPERM: ("permission_denied", "check the permissions and attributes of the file and its folders"),
    errno.EROFS: ("read_only_file_system", "the file system is mounted read-only; run where it is writable"),
    errno.ENOSPC: ("disk_full", "free some space on the disk, then run the command again"),
    errno.EDQUOT: ("disk_full", "the disk quota is used up; free some space, then run the command again"),
    errno.EIO: ("io_error", "the disk reported an I/O error; check the disk, then run the command again"),
    errno.ELOOP: ("symlink_loop", "too many levels of symlinks; replace the links with the real folder or file"),
    errno.ENOENT: ("not_found", "check the name, or list what exists (`memzoi proposals list`, `memzoi history`)"),
    errno.ENOTDIR: ("not_found", "a part of the path is a file, not a folder; check the path"),
    errno.EISDIR: ("is_a_directory", "pass a file, not a folder"),
}


def os_error(err: OSError) -> tuple[str, str]:
    """``(code, message)`` for an ``OSError``: the file it concerns (long names shortened), what went wrong and
    what to do."""
    code, advice = _OS_ERRORS.get(err.errno or 0, ("os_error", "check the file and run the command again"))
    name = err.filename if err.filename is not None else err.filename2
    if name is None:
        where = ""
    else:
        from ..judge.pathsafety import shown_local_path  # noqa: PLC0415 lazy: start-up

        shown = shown_local_path(os.fsdecode(name) if isinstance(name, bytes) else str(name))
        if len(shown) > 120:
            shown = f"{shown[:40]}…{shown[-40:]} ({len(shown)} characters)"
        where = f"{shown}: "
    return code, f"{where}{err.strerror or err.__class__.__name__}; {advice}"


def _runtime_state(err: Exception) -> tuple[str, str] | None:
    """``(code, message)`` when ``err`` is a failure of the runtime directory rather than a bug: a
    :class:`~memzoi.base.runtime_errors.RuntimeStateError` (it names its database or folder), or an ``sqlite3.Error``
    that reached the top without one (only runtime state is SQLite: the memzoi home is named)."""
    from ..base.runtime_errors import RuntimeStateError  # noqa: PLC0415 lazy: start-up
    from ..judge.pathsafety import with_shown_paths  # noqa: PLC0415 lazy: start-up

    if isinstance(err, RuntimeStateError):
        return err.code, with_shown_paths(err.message, err.path)
    if "sqlite3" in sys.modules and isinstance(err, sys.modules["sqlite3"].Error):
        from ..base.runtime import memzoi_home  # noqa: PLC0415 lazy: start-up
        from ..base.runtime_errors import runtime_error  # noqa: PLC0415 lazy: start-up

        state = runtime_error(err, memzoi_home(), "directory")
        return state.code, with_shown_paths(state.message, state.path)
    return None


def _fail(args: argparse.Namespace, code: str, message: str) -> int:
    """Report a failed command (:func:`memzoi.cli._common.fail`); exit code 1."""
    from ._common import fail  # noqa: PLC0415 lazy: start-up

    return fail(args, code, message)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
