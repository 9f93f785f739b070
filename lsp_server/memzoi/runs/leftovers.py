"""What killed processes left in the memzoi home, removed as a language server starts, off its event loop.

A process killed with SIGKILL (an editor ending its language server) runs no clean-up: it can leave the socket
folder of its workers' fork server (:mod:`memzoi.base.forktemp`) and the temporary file of a cache it was writing
(:mod:`memzoi.base.privatewrite`). The next write of the same cache, or the next fork server, removes them; a
project that is neither (a warm start writes no cache) would keep them until then, so :func:`sweep` removes them once
a language server's first scan is over (on its scan thread, off the path to its first diagnostics and its scan). It lists the memzoi home,
its ``cache`` folder and the owned folders (a ``stat`` for each that is absent), and removes only what it can
prove is a dead process's: an owned folder whose lock is free, a temporary file of one of memzoi's caches that no
live writer holds. Never another program's file, never a live process's.
"""

from __future__ import annotations

from functools import lru_cache


def sweep() -> list[str]:
    """Remove the dead processes' leftovers (module docstring); returns their names. Never raises."""
    from ..base import answercache, codecache, regexcache  # noqa: PLC0415 lazy: start-up
    from ..base.forktemp import sweep_dead  # noqa: PLC0415 lazy: start-up
    from ..base.privatewrite import sweep_temps  # noqa: PLC0415 lazy: start-up
    from ..base.runtime import HOME_FILE_PREFIX, memzoi_home  # noqa: PLC0415 lazy: start-up
    from ..stores.toolstamp import FAMILY  # noqa: PLC0415 lazy: start-up

    home = memzoi_home()
    removed = sweep_dead()
    removed += sweep_temps(home, HOME_FILE_PREFIX + FAMILY)
    families = (answercache.PREFIX, codecache.FILE_PREFIX, codecache.HYPERSCAN_PREFIX, regexcache.FILE_PREFIX)
    removed += sweep_temps(home / "cache", families)
    return removed


@lru_cache(maxsize=1)
def sweep_once() -> None:
    """:func:`sweep`, once per process (a server registers a project per workspace folder)."""
    sweep()


__all__ = ["sweep", "sweep_once"]
