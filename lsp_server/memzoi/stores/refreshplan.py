"""What an index refresh does (:class:`Plan`, made by :func:`memzoi.stores.index_fresh.stale`), the rule it asks of
each file judged one by one (:class:`Judge`), and its writes of stamps (:func:`memzoi.stores.currentlisting.write_stamps`), apart from the
decision of which files to judge, so that both ways of deciding (the comparison of every file's stamp, and the mark
of a listing found current, :mod:`memzoi.stores.currentlisting`) judge a file by the same rule."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base import freshness
from ..base.freshness import Stat

#: One row's new stat after a confirming read: ``(size, mtime_ns, ino, ctime_ns, checked_ns, path key)``.
Restamp = tuple[int, int, int, int, int, str]


@dataclass(frozen=True)
class Mark:
    """What a refresh found current (:mod:`memzoi.stores.currentlisting`): find's output's ``digest`` (hex BLAKE3),
    the ``devices`` of its files, the ``folders`` holding them (absolute), the ``files`` generation ``gen`` its
    rows were read at, ``redacted``: each row under a redacted key with the byte offset of its file's item in
    the output (an offset, never the path, which bears a secret), and ``racy``: the (plain) keys of the rows whose
    stamp is racy (:func:`memzoi.base.freshness.not_racy`), which every search taking the mark reads and compares
    by content (git's racy-entry rule)."""

    digest: str
    devices: tuple[int, ...]
    folders: tuple[str, ...]
    gen: str
    redacted: tuple[tuple[str, int], ...] = ()
    racy: tuple[str, ...] = ()


@dataclass
class Plan:
    """What a refresh must do: re-index ``changed`` (absolute paths), drop the rows ``gone`` (keys), keep the
    rows of ``restamp`` under their new stat, and record ``git`` (:func:`memzoi.stores.index_fresh.git_state`) once
    done; ``mark``: what to leave as found current, with the restamps (:func:`memzoi.stores.currentlisting.write_stamps`);
    ``gen``: the generation of ``files`` the decision read the rows at (``meta`` ``files_gen``); ``expect``: the
    key and listed stamp of each file to re-index, which its new row must carry for ``mark`` to be left."""

    changed: list[Path] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    restamp: list[Restamp] = field(default_factory=list)
    git: str = ""
    git_changed: bool = False
    mark: Mark | None = None
    gen: str | None = None
    expect: list[tuple[str, tuple[int, int, int, int]]] = field(default_factory=list)


class Judge:
    """The rule for one file of a refresh: kept when the stat vouches (:func:`memzoi.base.freshness.trusted`,
    unless the sample drew it: ``due``), else read and compared with its row's digest: other bytes are re-indexed,
    equal bytes keep the row, restamped where the new stamp lets the stat vouch more
    (:func:`memzoi.base.freshness.restamp_gains`: a file the sample drew, or one on a file system whose stamps never
    vouch, is read again each time anyway, and writing its same stamp again would make every search write).
    ``exact`` stays true while every file judged is left with a row whose stamp is the file's listed stamp and
    vouches or is racy (``racy``: those keys; a mark of :mod:`memzoi.stores.currentlisting` lists them, to be
    read again by every search that takes it). ``present`` (key → path) collects the files
    judged, for :func:`memzoi.stores.index_fresh.readmitted`."""

    def __init__(self, plan: Plan, now: int, present: dict[str, str] | None) -> None:
        self.plan, self.now, self.present = plan, now, present
        self.exact = True
        self.racy: list[str] = []

    def __call__(self, path: str, key: str, row: Any, st: Stat | None, *, due: bool = False) -> None:
        if self.present is not None:
            self.present[key] = path
        if st is None:  # listed, gone since (or no longer a regular file): gone
            if row is not None:
                self.plan.gone.append(key)
            return
        if row is not None and not due and freshness.trusted(st.stamp, st.dev, row[:4], row[4], self.now):
            return
        read = freshness.confirm(path, row[0], bytes.fromhex(row[5])) if row is not None else None
        if read is None:
            self.plan.changed.append(Path(path))
        elif freshness.restamp_gains(row[:4], row[4], read[1], read[2]):  # else the row's stamp says as much
            self.plan.restamp.append((*read[1], read[2], key))
            self.exact = self.exact and read[1] == st.stamp
            if not freshness.not_racy(read[1], read[2]):
                self.racy.append(key)
        else:  # the stored stamp is the read's, not racy or still racy (freshness.restamp_gains)
            if not freshness.not_racy(read[1], read[2]):  # still racy (a file dated after the clock): read again
                self.racy.append(key)
            if not due:  # exact where it is the listed one (the sample drew a file judged one by one, as one under
                # a redacted key is) and not where the stamp changed
                self.exact = self.exact and read[1] == st.stamp


__all__ = ["Judge", "Mark", "Plan", "Restamp"]
