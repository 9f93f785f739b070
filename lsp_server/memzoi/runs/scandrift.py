"""What changed on disk between the language server's first scan and its watches: the project's files whose state
differs from the one the scan judged them by.

The server sets its ``.memzoi`` watches up once the scan's files are taken in, not before: a watch in place while
the workers read every file is woken by each open (inotify's ``IN_OPEN``, which watchfiles does not let a caller
leave out; about 0.24 s of CPU at 11,000 files, issue 29: cold server scan). A file changed after a worker read it
and before the watches exist is then in no event, so once they exist (:func:`memzoi.base.dirwatch.changed_paths`'
``ready``) the project is listed once and each file's ``lstat`` is compared with the stamp its compact verdict was
made from (:meth:`memzoi.stores.firststage.FirstStage.current`'s rule): every path that differs goes through the
watch pass as an event would. A change after the watches exist is the watcher's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..project.projectfiles import listed
from ..stores.firststage import lstamp

if TYPE_CHECKING:
    from ..stores.firststage import Stamp
    from .projectstate import ProjectState


def held_stamps(state: ProjectState) -> dict[str, Stamp | None]:
    """Absolute path -> the stat stamp ``state`` judged the file by (its compact verdict's), for every file of its
    set; ``None`` where no verdict holds one (the file was analysed otherwise, or not at all: it counts as changed).
    On the state's owner's thread (the server's event loop): a copy the scan thread can compare without a lock."""
    held: dict[str, Stamp | None] = dict.fromkeys(state.tracked.files)
    for verdict in state.verdicts.values():
        if verdict.path in held:
            held[verdict.path] = verdict.stamp
    return held


def drifted(memzoi_dir: str, held: Mapping[str, Stamp | None]) -> list[str]:
    """The absolute paths below ``memzoi_dir`` whose state on disk is not the one ``held`` (:func:`held_stamps`)
    gives: files listed now and not held, or held without a stamp, or whose ``lstat`` stamp differs (an edit, a
    rename over the file), in listing order; then files held and no longer listed (gone). Reads only the disk and
    ``held``, so it may run on any thread; never raises (an unreadable folder lists nothing: its files count as
    gone, and the watch pass judges each by its state on disk)."""
    now = listed(memzoi_dir)
    listed_now = set(now)
    out = [path for path in now if (stamp := held.get(path)) is None or lstamp(path) != stamp]
    out += [path for path in held if path not in listed_now]
    return out


__all__ = ["drifted", "held_stamps"]
