"""The plumbing every command feature shares (``workspace/executeCommand``): argument parsing, the target file and
project of a command, the unsaved-buffer refusal, one core change run off the event loop and shown, and the
:func:`command` decorator that turns refusals into JSON-RPC errors (:mod:`.refusal`).

Not a feature: it imports none (``tests/test_architecture.py``), so the lifecycle, resident, routing,
materialization, preview, local-memory and checkpoint features all build on it without importing each other.
Arguments follow the editor clients: one object ``{"uri", "reason", "change_id", "mode", "title", "body"}`` (or a
bare URI string). Before running, a command refuses when the file it acts on is open with unsaved changes (the
core reads the disk, so it would act on something other than what the user sees). Afterwards every file the change
touched is re-indexed at once (no waiting for a watcher event, B28) and created packets are shown with
``window/showDocument``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from lsprotocol import types

from memzoi.base.runtime_errors import RuntimeStateError

from .documents import path_to_uri, uri_to_path
from .logbridge import shown_in
from .refusal import CommandRefused

# A real import (not TYPE_CHECKING): pygls resolves command handlers' annotations at call time.
from .session import CommandSession

if TYPE_CHECKING:
    from memzoi.ledger import ChangeResult

log = logging.getLogger("memzoi_lsp.lifecycle")

T = TypeVar("T")


class CommandError(Exception):
    """A refusal raised by the server itself (bad arguments, unsaved changes); reported like a core refusal."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def parse_args(args: tuple[Any, ...]) -> dict[str, Any]:
    """The clients' argument object (first argument), or ``{"uri": s}`` for a bare string."""
    if not args:
        return {}
    first = args[0]
    if isinstance(first, dict):
        return dict(first)
    if isinstance(first, str):
        return {"uri": first}
    raise CommandError("invalid_arguments", 'expected an object like {"uri": ...} as the command argument')


def target_path(ls: CommandSession, arg: dict[str, Any]) -> tuple[Path, Path]:
    """``(project root, file path)`` of the ``uri`` argument; refuses outside a project."""
    uri = arg.get("uri")
    if not isinstance(uri, str) or not uri:
        raise CommandError("invalid_arguments", "this command needs the file's `uri`")
    path = uri_to_path(uri)
    if path is None:
        raise CommandError("invalid_arguments", f"{uri}: not a file URI; save the document first")
    project = ls.project_for(path)
    if project is None:
        from memzoi.judge.workspace import place  # noqa: PLC0415 lazy: start-up

        placement = place(path)
        if placement.memzoi_dir is None:
            raise CommandError("not_in_project", f"{path.name}: not inside a .memzoi directory")
        project = ls.add_project(placement.memzoi_dir.parent)
        if project is None:
            raise CommandError("not_in_project", f"{path.name}: not inside a .memzoi directory")
    return project.root, path


def project_root(ls: CommandSession, arg: dict[str, Any]) -> Path:
    """The project of the ``uri`` argument, else the only (or first) project of the workspace."""
    if arg.get("uri"):
        return target_path(ls, arg)[0]
    if not ls.projects:
        raise CommandError("not_in_project", "no .memzoi directory in this workspace; run `memzoi init` first")
    return sorted(ls.projects)[0]


def refuse_if_dirty(
    ls: CommandSession, *paths: Path, previewed: str | None = None, root: Path | None = None, operation: str = ""
) -> None:
    """Refuse when one of ``paths`` is open in the editor with text the file on disk does not hold: the core's one
    rule (:func:`memzoi.lifecycle.buffers.unsaved`), the same the code actions are disabled by. With the
    ``previewed`` fingerprint of the change (and the project ``root``), a file that changed on disk since the
    preview is refused first as the change itself would refuse it, ``preview_stale`` (the client offers the new
    preview; an open buffer that has not caught up with the disk is not the reviewer's to reload)."""
    from memzoi.lifecycle.buffers import unsaved  # noqa: PLC0415 lazy: start-up

    if previewed is not None and root is not None:
        from memzoi.ledger.previewed import check_files_on_disk  # noqa: PLC0415 lazy: start-up

        check_files_on_disk(previewed, root, paths, operation)
    for path in paths:
        uri = path_to_uri(path)
        is_open = ls.docs.is_open(uri)
        text = ls.workspace.get_text_document(uri).source if is_open else ""
        edited, disk_changed = ls.docs.load_state(uri, text) if is_open else (True, False)
        why = unsaved(
            path,
            text,
            is_open=is_open,
            behind=is_open and ls.docs.is_behind(uri),
            edited=edited,
            disk_changed=disk_changed,
        )
        if why is not None:
            raise CommandError("unsaved_changes", f"{why} (lifecycle changes act on the file on disk)")


def previewed_of(arg: dict[str, Any]) -> str | None:
    """The ``previewed`` argument: the fingerprint a ``memzoi.preview`` answer carried
    (:mod:`memzoi.ledger.previewed`), sent back so the change is refused when a file changed since the preview;
    ``None`` when absent (an older client: the change acts on the disk as it is). Refuses a non-string."""
    previewed = arg.get("previewed")
    if previewed is None:
        return None
    if not isinstance(previewed, str):
        raise CommandError("invalid_arguments", "`previewed` is the `previewed` string of a preview's answer")
    return previewed


def reason_of(arg: dict[str, Any], required: bool) -> str | None:
    """The trimmed ``reason`` argument; refuses when required and missing."""
    reason = arg.get("reason")
    reason = reason.strip() if isinstance(reason, str) else None
    if required and not reason:
        raise CommandError("reason_required", "a reason is required: it is recorded with the change")
    return reason or None


async def run_change(
    ls: CommandSession,
    root: Path,
    call: Callable[[], ChangeResult],
    *,
    show_created: bool = False,
    show: Callable[[ChangeResult], list[Path]] | None = None,
) -> dict[str, Any]:
    """Run one core change off the event loop, then re-index its files and show what it created."""
    from memzoi.lifecycle.messages import change_message  # noqa: PLC0415 lazy: start-up

    from . import changes  # noqa: PLC0415 lazy: start-up

    loop = asyncio.get_running_loop()
    result: ChangeResult = await loop.run_in_executor(None, call)
    message, detail = change_message(result)
    log.info("%s: %s", message, detail)
    # B28: re-read and indexed now, not when a watcher notices; the client is told which buffers to reload.
    changes.after_write(
        ls,
        [root / f.path for f in result.files],
        change_id=result.change_id,
        operation=result.operation,
        message=message,
        before={root / f.path: f.before for f in result.files if isinstance(f.before, bytes)},
    )
    to_show: list[Path] = []
    if show_created:
        to_show += [root / f.path for f in result.files if f.before is None and f.after is not None]
    if show is not None:
        to_show += show(result)
    for path in to_show:
        if path.suffix == ".md" and path.is_file():
            await show_document(ls, path)
    return {"message": message, "detail": detail, **result.to_json()}


async def show_document(ls: CommandSession, path: Path) -> None:
    """Ask the client to show ``path``, waiting at most ``showDocumentTimeoutMs``: the change is on disk already, so
    a client that never answers (or fails) leaves the command answered anyway, with a log line saying so."""
    # The request's own future (pygls's helper is a coroutine), sent at once.
    reply = ls.protocol.send_request_async(
        "window/showDocument", types.ShowDocumentParams(uri=path_to_uri(path), take_focus=True)
    )
    # A late answer still settles the request: shielded from the timeout's cancellation, its outcome consumed.
    reply.add_done_callback(lambda f: f.cancelled() or f.exception())
    timeout_ms = ls.settings.show_document_timeout_ms
    try:
        await asyncio.wait_for(asyncio.shield(reply), timeout_ms / 1000)
    except TimeoutError:
        from memzoi.judge.pathsafety import shown_path  # noqa: PLC0415 lazy: start-up

        log.warning(
            "the client did not answer window/showDocument for %s within %d ms; the command answered "
            "without it (the change is on disk)",
            shown_path(path.name),
            timeout_ms,
        )
    except Exception as err:  # a client without showDocument, or a malformed reply, still gets the result
        log.info("showDocument failed: %s", type(err).__name__)


#: A command's body: the session and the parsed argument object (:func:`parse_args`) in, a JSON value out.
CommandBody = Callable[[CommandSession, dict[str, Any]], Awaitable[Any]]


class CommandHandler(Protocol):
    """A command as :func:`command` makes it: pygls calls it with the session and the raw arguments; its
    identifier is ``__memzoi_command__`` (``server.command(h.__memzoi_command__)(h)`` registers it)."""

    __memzoi_command__: str
    __name__: str

    def __call__(self, ls: CommandSession, *args: Any) -> Awaitable[Any]: ...


def command(name: str) -> Callable[[CommandBody], CommandHandler]:
    """Register a lifecycle command: argument parsing, refusals as JSON-RPC errors (:mod:`.refusal`), logging."""

    def wrap(fn: CommandBody) -> CommandHandler:
        async def handler(ls: CommandSession, *args: Any) -> Any:
            from memzoi.ledger import Refusal  # noqa: PLC0415 lazy: start-up - the core's lifecycle is loaded at the first command
            from memzoi.safety.redact import given_secrets, scrub_echoes  # noqa: PLC0415 lazy: start-up

            try:
                return await fn(ls, parse_args(args))
            except (Refusal, CommandError, RuntimeStateError) as err:  # a full or read-only runtime dir too
                # A message may repeat a caller's argument (a URI, an id): what a secret detector flags in the
                # arguments is never echoed, neither in the reply nor in the log (the core's one rule); local paths
                # are respelled first, so that one bearing a secret keeps its `<redacted-path:…>` marker.
                message = scrub_echoes(shown_in(ls, err.message), given_secrets(list(args)))
                # One notification per refusal: the client reports the error response; the server adds none.
                log.info("%s refused: %s", name, message)
                raise CommandRefused(err.code, message, getattr(err, "path", None)) from None
            except OSError as err:
                message = f"{name}: {err.strerror or err}; nothing was changed by the server"
                log.warning("%s", message)
                raise CommandRefused("io_error", message) from None

        # Not functools.wraps: pygls reads the handler's signature (``*args``) to structure the arguments.
        handler.__name__ = fn.__name__
        handler.__doc__ = fn.__doc__
        made = cast(CommandHandler, handler)
        made.__memzoi_command__ = name
        return made

    return wrap


def replacement(ls: CommandSession, path: Path, arg: dict[str, Any]) -> tuple[str, str]:
    """The title and body of a supersede of the record at ``path``: the arguments', else the record's own."""
    from memzoi.base.views import Frontmatter  # noqa: PLC0415 lazy: start-up

    snap = ls.docs.snapshot(path_to_uri(path))
    title = arg.get("title") or (Frontmatter(snap.analysis.document.data).title if snap else None) or ""
    return title, arg.get("body") or (snap.analysis.document.body if snap else "")


def roots(ls: CommandSession, arg: dict[str, Any]) -> list[Path]:
    """The project roots a command acts on: the ``root`` argument (refused unless it is a workspace project), else
    every project of the workspace, sorted."""
    root = arg.get("root")
    if isinstance(root, str) and root:
        wanted = Path(root).resolve()
        if wanted not in ls.projects:
            raise CommandError("not_in_project", f"{root}: not a project of this workspace")
        return [wanted]
    return sorted(ls.projects)


def one_root(ls: CommandSession, arg: dict[str, Any]) -> Path:
    """The one project root a command acts on; refused without a project, or with several and no ``root``."""
    found = roots(ls, arg)
    if not found:
        raise CommandError("not_in_project", "no project in this workspace")
    if len(found) > 1 and not arg.get("root"):
        raise CommandError("invalid_arguments", "several projects are open: pass the candidate's `root`")
    return found[0]


async def off_loop(call: Callable[[], T]) -> T:
    """``call()`` run in the loop's default executor (core reads and writes that block), its result awaited."""
    return await asyncio.get_running_loop().run_in_executor(None, call)


class CommandGroup:
    """A command feature (lifecycle, resident, resident state, routing, materialization, preview, checkpoints, local
    memory, the inbox, the workspace commands): its ``workspace/executeCommand`` handlers by command identifier,
    registered from one method as every feature's are (docs/architecture.md, "Features over snapshots"). It owns no
    state: each handler receives the :class:`~memzoi_lsp.session.CommandSession`. ``setup`` runs once before the
    handlers are registered (the lifecycle's refusal reporting, :func:`memzoi_lsp.refusal.install`)."""

    def __init__(
        self, name: str, handlers: dict[str, Callable[..., Any]], setup: Callable[[], None] | None = None
    ) -> None:
        self.name = name
        self.handlers = handlers
        self._setup = setup

    @classmethod
    def of(cls, name: str, handlers: list[CommandHandler], setup: Callable[[], None] | None = None) -> CommandGroup:
        """The group of ``handlers`` made by :func:`command` (each names its own command)."""
        return cls(name, {h.__memzoi_command__: h for h in handlers}, setup)

    def register(self, server: CommandSession) -> None:
        """Register every command of the group, each answering through :func:`shown_answers`."""
        if self._setup is not None:
            self._setup()
        for command_name, handler in self.handlers.items():
            server.command(command_name)(shown_answers(handler))


def shown_answers(handler: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """``handler`` whose result and refusal (:class:`~.refusal.CommandRefused`) name local paths only as
    :func:`shown_in` shows them: the one place every command's answer leaves the server."""

    async def answer(ls: CommandSession, *args: Any) -> Any:
        try:
            result = await handler(ls, *args)
        except CommandRefused as err:
            data = err.data if isinstance(err.data, dict) else {}
            raise CommandRefused(
                str(data.get("code", "refused")), shown_in(ls, err.message), shown_in(ls, data.get("path"))
            ) from None
        return shown_in(ls, result)

    # Not functools.wraps: pygls reads the handler's signature (``*args``) to structure the arguments.
    answer.__name__ = getattr(handler, "__name__", "command")
    answer.__doc__ = handler.__doc__
    return answer
