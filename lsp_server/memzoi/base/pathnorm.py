"""``os.path.abspath`` of paths that are most often absolute and normal already.

A scan's files are listed as absolute, normal paths (the walk joins each name to a normal folder), and each is
made absolute again by every step that keys by path: the listing, git's visibility, a worker's job, the index key,
the verdict (some 2 us a time; 3 per file in a language-server scan's worker, and twice per file in its listing,
on the path to its first worker: issue 29, cold server scan). :func:`absolute` returns such a path as it is, after a
few substring tests, and hands any other to ``os.path.abspath``.
"""

from __future__ import annotations

import os

_POSIX = os.sep == "/" and os.altsep is None


def is_normal_absolute(path: str) -> bool:
    """True only when ``os.path.abspath(path) == path`` (POSIX): ``path`` starts with ``/`` and has no empty, ``.``
    or ``..`` component and no trailing ``/`` (or is ``/``). False may also be said of some such paths (a leading
    ``//``, which ``normpath`` keeps), never True of one ``abspath`` changes; always False elsewhere than POSIX."""
    return (
        _POSIX
        and path.startswith("/")
        and "//" not in path
        and "/./" not in path
        and "/../" not in path
        and not path.endswith(("/.", "/.."))
        and (path == "/" or not path.endswith("/"))
    )


def absolute(path: str) -> str:
    """``os.path.abspath(path)``, returning ``path`` itself (the same object) when it is absolute and normal
    already (:func:`is_normal_absolute`)."""
    return path if is_normal_absolute(path) else os.path.abspath(path)


__all__ = ["absolute", "is_normal_absolute"]
