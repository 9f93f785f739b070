"""``memzoi-lsp``: run the Memzoi language server.

stdio by default; ``--tcp HOST PORT`` serves one TCP connection (for debugging). Logs go to the client as
``window/logMessage`` (settings ``logToClient``, ``logLevel``); stderr, which clients record as errors, gets only
warnings and errors unless ``--log-level`` asks for more. Stdout is the JSON-RPC channel and nothing else is ever
written to it. Exit status: 0 after a
``shutdown``/``exit`` sequence, 1 when the client went away without ``shutdown`` (stdin closed).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from memzoi import __version__

if TYPE_CHECKING:
    from .transport import Early

#: The packages whose attrs classes the server imports before it answers `initialize`.
PROTOCOL_PACKAGES = ("lsprotocol", "pygls", "cattrs")


def _protocol_code_cache() -> AbstractContextManager[dict[str, int]]:
    """The cache of attrs' generated code for the protocol libraries (:func:`memzoi.base.codecache.attrs_code_cache`),
    in ``$MEMZOI_HOME/cache``; without a usable directory, importing as usual."""
    from memzoi.base.codecache import attrs_code_cache  # noqa: PLC0415 lazy: start-up

    return attrs_code_cache(_cache_dir(), PROTOCOL_PACKAGES)


def _cache_dir() -> Path | None:
    """``$MEMZOI_HOME/cache`` (private), or ``None`` when it cannot be made."""
    from memzoi.base.runtime import memzoi_home, private_dir  # noqa: PLC0415 lazy: start-up

    try:
        return private_dir(memzoi_home() / "cache")
    except OSError as err:
        logging.getLogger("memzoi_lsp").info("no start-up cache directory: %s", err)
        return None


def _early_initialize(stdin: BinaryIO, stdout: BinaryIO) -> Early:
    """Read the client's first frame before the protocol libraries are imported; when it is ``initialize`` and an
    answer to the same params from the same code is kept (:mod:`memzoi.base.answercache`), send it now. Returns
    the :class:`~memzoi_lsp.transport.Early` state for :func:`~memzoi_lsp.transport.serve`, which keeps the
    server's own answer for the next start."""
    from memzoi.base import answercache  # noqa: PLC0415 lazy: start-up

    from .transport import answer_early, initialize_request, read_early  # noqa: PLC0415 lazy: start-up

    early = read_early(stdin)
    request = initialize_request(early)
    if request is None:
        return early
    request_id, params = request
    directory = _cache_dir()
    try:
        key = answercache.answer_key(params, answercache.code_stamp(("memzoi_lsp", *PROTOCOL_PACKAGES)))
    except (OSError, ValueError, TypeError) as err:  # an unreadable package directory, params JSON cannot hold
        logging.getLogger("memzoi_lsp").info("initialize is answered by the server only: %s", type(err).__name__)
        return early
    early.request_id = request_id

    def keep(result: Any) -> None:
        answercache.write_answer(directory, key, result)

    early.keep = keep
    kept = answercache.read_answer(directory, key)
    if kept is not None:
        answer_early(early, stdout, request_id, kept)
    return early


def _prefork(early: Early | None) -> bool:
    """:func:`memzoi.runs.coldstart.prefork` of the workspace folders the ``initialize`` read ``early`` names
    (:func:`_early_roots`), before the protocol libraries are imported, when a kept answer to it went out already
    (else the server forks later, :func:`memzoi_lsp.startup.prefork`). Returns whether it forked."""
    if early is None or early.answered is None:
        return False
    from memzoi.runs.coldstart import prefork  # noqa: PLC0415 lazy: start-up

    from .transport import initialize_request  # noqa: PLC0415 lazy: start-up

    request = initialize_request(early)
    try:
        return prefork(_early_roots(request[1] if request is not None else {}))
    except (OSError, RuntimeError, ValueError):
        return False


def _early_roots(params: dict[str, Any]) -> list[Path]:
    """The folders ``initialize``'s ``params`` names, resolved: its ``workspaceFolders``, else its ``rootUri``, else
    its ``rootPath`` (``file:`` URIs only). The server's own reading of them decides its projects; a folder read
    otherwise here only misses the head start."""
    from urllib.parse import unquote, urlsplit  # noqa: PLC0415 lazy: start-up

    folders = params.get("workspaceFolders")
    uris = [f.get("uri") for f in folders if isinstance(f, dict)] if isinstance(folders, list) else []
    uris = uris or [params.get("rootUri")]
    roots = [Path(unquote(u.path)) for u in (urlsplit(x) for x in uris if isinstance(x, str)) if u.scheme == "file"]
    if not roots and isinstance(params.get("rootPath"), str):
        roots.append(Path(params["rootPath"]))
    return [root.resolve() for root in roots]


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, configure logging to stderr and serve until the client exits."""
    from memzoi.base import gcpause  # noqa: PLC0415 lazy: start-up

    # The collector would walk the start-up's imports again and again; it resumes once the documents opened with
    # `initialized` are published (MemzoiServer.start_background), or once the first scan has published every file.
    gcpause.pause()
    # pydantic looks for plugins (its observability hooks) by reading the metadata of every installed distribution
    # when the first model is built (importlib.metadata and zipfile: some 20-40 ms of the warm start's imports), for
    # hooks the server has no use for; as `memzoi` does. A value the user set is kept
    # (https://docs.pydantic.dev/latest/concepts/plugins/#disabling-plugins).
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    parser = argparse.ArgumentParser(prog="memzoi-lsp", description="Memzoi language server (stdio by default)")
    parser.add_argument("--tcp", nargs=2, metavar=("HOST", "PORT"), help="serve one TCP connection instead of stdio")
    parser.add_argument("--stdio", action="store_true", help="serve over stdin/stdout (the default)")
    parser.add_argument(
        "--log-level",
        default=None,
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="what is also written to stderr (default: WARNING)",
    )
    parser.add_argument("--version", action="version", version=f"memzoi-lsp {__version__}")
    args = parser.parse_args(argv)

    # Why at import of main: anything a library prints must not reach the JSON-RPC stream.
    real_stdout = sys.stdout
    sys.stdout = sys.stderr
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    stderr_level = args.log_level or "WARNING"
    # Before anything imports the protocol libraries (the log bridge does): a kept answer goes out at once.
    early = None if args.tcp else _early_initialize(sys.stdin.buffer, real_stdout.buffer)
    # `initialize` answered already from the kept answer: a cold project's analysis loads and its workers' fork
    # server forks now, before the protocol libraries, so its first files are analysed while they load
    forked = _prefork(early)
    # Every import of lsprotocol, pygls and cattrs under the attrs code cache (the log bridge imports lsprotocol's
    # types too: imported before the cache, they were compiled afresh at every start).
    with _protocol_code_cache():
        from .logbridge import OneLineLibraryErrors, install as install_bridge  # noqa: PLC0415 lazy: start-up
        from .server import create_server  # noqa: PLC0415 lazy: start-up

    for handler in logging.getLogger().handlers:
        handler.setLevel(stderr_level)
        if stderr_level != "DEBUG":
            handler.addFilter(OneLineLibraryErrors())
    # The loggers pass INFO (or DEBUG) on: the client bridge picks what the `logLevel` setting asks for.
    for name in ("memzoi_lsp", "memzoi"):
        logging.getLogger(name).setLevel("DEBUG" if args.log_level == "DEBUG" else "INFO")
    # pygls logs every message body at INFO: keep it quiet.
    logging.getLogger("pygls").setLevel(logging.WARNING)

    server = create_server()
    install_bridge(server)
    if early is not None:  # once `initialize` is answered, before any thread: as above (unless done already)
        from .startup import prefork  # noqa: PLC0415 lazy: start-up

        early.settled = lambda: prefork(server, forked=forked)
    if args.tcp:
        host, port = args.tcp
        try:
            server.start_tcp(host, int(port))
        except SystemExit as exc:  # pygls raises SystemExit from the connection callback on `exit`
            return int(exc.code or 0)
    else:
        server.start_io(sys.stdin.buffer, real_stdout.buffer, early=early)
    if server.transport_failure:
        return 1  # the input could not be resynchronised: the editor restarts the server
    return 0 if server.protocol._shutdown or server.stopping else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
