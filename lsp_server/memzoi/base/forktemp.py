"""The folder of the workers' fork server's socket, owned by the language server so that a kill leaves no debris.

The standard library's fork server (:mod:`multiprocessing.forkserver`, started by
:func:`memzoi.base.parallel.start_helper` and :func:`~memzoi.base.parallel.fork_helper`) listens on a Unix socket
that its caller binds in ``ForkServer.ensure_running``: ``connection.arbitrary_address("AF_UNIX")`` names it
``listener-XXXXXXXX`` in ``util.get_temp_dir()``, a ``pymp-XXXXXXXX`` folder (mode 0700) that ``tempfile.mkdtemp``
makes in ``$TMPDIR`` once per process and that a ``util.Finalize`` removes at a normal exit. That folder holds only
the socket; the caller connects to it for every worker it starts, so it must exist while the fork server serves.
Python 3.11, 3.12 and 3.13 all do so (a file-system socket: the abstract Linux namespace, used by 3.9 to 3.11.0,
was dropped as CVE-2022-42919, since any local user could reach it). A caller killed with SIGKILL runs no
finalizer, so the folder stayed in ``$TMPDIR`` for ever, and nothing can tell another program's ``pymp-`` folder
from ours there.

:func:`own_temp_dir` gives multiprocessing its temporary folder before it makes one: an
:class:`~memzoi.base.ownedfolder.OwnedFolder` in the memzoi home (private, locked for the process's life, removed at
a normal exit), set as the process's ``tempdir`` the way ``get_temp_dir`` keeps its own. A server killed with
SIGKILL leaves it, and the next process that takes an owned folder, or :func:`sweep_dead` at the next server's
start, removes it, since its lock is free; a live server's is never removed. Where the memzoi home's path is too long
for a socket's address (108 bytes on Linux), the folder is owned in ``$XDG_RUNTIME_DIR`` instead (the user's private
runtime folder, short, emptied at logout) under the same name; where neither fits or can be made, multiprocessing
makes its ``pymp-`` folder as before.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Linux's ``sun_path`` holds 108 bytes, its closing NUL included; the socket is named ``/listener-`` + 8 chars.
_SOCKET_ROOM = 108 - 1 - len("/listener-") - 8
#: The owned folders' name prefix (the memzoi home's ``memzoi-lsp-owned/forkserver-XXXXXXXX``).
PREFIX = "forkserver-"


def places() -> list[Path]:
    """Where the socket folders are owned, in order: the memzoi home's owned folders
    (:func:`memzoi.base.ownedfolder.owned_root`), then, when ``$XDG_RUNTIME_DIR`` names an absolute folder, the
    folder of the same name there."""
    from .ownedfolder import OWNED, owned_root  # noqa: PLC0415 lazy: start-up

    out = [owned_root()]
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(xdg):
        out.append(Path(xdg) / OWNED)
    return out


def own_temp_dir() -> bool:
    """Make this process's multiprocessing temporary folder an owned folder (module docstring), unless it has one
    already. Returns whether the folder in use is an owned one. Call it before a fork server starts; never
    raises."""
    from multiprocessing import process, util  # noqa: PLC0415 lazy: start-up

    from .ownedfolder import OwnedFolder  # noqa: PLC0415 lazy: start-up

    config = getattr(process.current_process(), "_config", None)
    if not isinstance(config, dict):
        return False
    if config.get("tempdir") is not None:
        return os.path.basename(str(config["tempdir"])).startswith(PREFIX)
    for top in places():
        if len(os.fsencode(os.path.abspath(top))) + len(f"/{PREFIX}") + 8 > _SOCKET_ROOM:  # mkdtemp adds 8 chars
            continue
        try:
            folder = OwnedFolder(PREFIX, parent=top)
        except OSError:
            continue
        break
    else:
        return False
    config["tempdir"] = folder.path
    # as get_temp_dir's own folder: removed at a normal exit, last; a forked child drops the finalizer
    util.Finalize(None, folder.close, exitpriority=-100)
    return True


def sweep_dead() -> list[str]:
    """Remove the owned folders whose owner is gone (:func:`memzoi.base.ownedfolder.sweep`) in each of
    :func:`places` that exists (one ``stat`` for one that does not). Returns the names removed; never raises."""
    from .ownedfolder import sweep  # noqa: PLC0415 lazy: start-up

    removed: list[str] = []
    for top in places():
        try:
            if top.is_dir():
                removed += sweep(top)
        except OSError:
            continue
    return removed


__all__ = ["PREFIX", "own_temp_dir", "places", "sweep_dead"]
