"""The stat each file had when a long-lived caller's scan took its first stage, kept for the index's refresh after
the scan (issue 29: one walk and one stat per file; :func:`memzoi.stores.index_fresh.plane_of`).

The scan checks each first stage against the file once (:meth:`ScanStats.current`, one ``lstat``); the stamp is
the first stage's own (:attr:`memzoi.stores.firststage.FirstStage.stamp`, held anyway), so all that is kept here is
the device of a file that is not on the device of the project's other files (a mount below ``.memzoi``), which
the freshness rule asks for the file system's type (:func:`memzoi.base.freshness.ctime_kept`).
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

from ..base.freshness import Stat

if TYPE_CHECKING:
    from ..stores.firststage import FirstStage


class ScanStats:
    """The devices of the files whose first stages :meth:`current` found current (see the module docstring).
    Thread-safe (a lock): the owner's loop checks, the scan thread reads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._device: int | None = None  # the device of the first file found current
        self._others: dict[str, int] = {}  # path -> device, of files on another one

    def current(self, stage: FirstStage) -> bool:
        """True when the file's stat is still the one ``stage`` was made from (one ``lstat`` of ``stage.path``, as
        :meth:`memzoi.stores.firststage.FirstStage.current`); its device is then kept for :meth:`stat_of`."""
        try:
            st = os.lstat(stage.path)
        except (OSError, ValueError):
            return False
        if stage.stamp is None or (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns) != stage.stamp:
            return False
        with self._lock:
            if self._device is None:
                self._device = st.st_dev
            if st.st_dev != self._device:
                self._others[stage.path] = st.st_dev
            else:
                self._others.pop(stage.path, None)
        return True

    def stat_of(self, stage: FirstStage | None) -> Stat | None:
        """The :class:`memzoi.base.freshness.Stat` the scan took of ``stage``'s file (a first stage :meth:`current`
        found current, and kept since by its holder: a change of the file drops it), ``None`` for ``None`` or a
        stage without a stamp."""
        if stage is None or stage.stamp is None:
            return None
        with self._lock:
            device = self._others.get(stage.path, self._device)
        return Stat(stage.stamp, device) if device is not None else None


__all__ = ["ScanStats"]
