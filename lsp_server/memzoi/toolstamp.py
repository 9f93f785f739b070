"""What identifies the code that makes a verdict (:func:`tool_stamp`), for the verdict cache's context stamp
(:func:`memzoi.verdictcache.context_stamp`): an edited checkout changes findings without changing the version."""

from __future__ import annotations

import os
import sys
from functools import lru_cache

import blake3

from . import __version__


def _source_stamp(top: str) -> list[str]:
    """``name:size:mtime_ns`` of every file of the installed package below ``top`` (an edited checkout changes
    findings without changing the version)."""
    out: list[str] = []
    stack = [top]
    while stack:
        d = stack.pop()
        try:
            with os.scandir(d) as it:
                for e in it:
                    if e.is_dir(follow_symlinks=False):
                        if e.name != "__pycache__":
                            stack.append(e.path)
                    elif e.name.endswith(".py"):
                        st = e.stat()
                        out.append(f"{e.path[len(top):]}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            out.append(f"{d}:unreadable")
    return sorted(out)


@lru_cache(maxsize=1)
def tool_stamp() -> str:
    """What identifies the code that makes findings: memzoi's version, the stat of its source files, Python's
    version and the location and stat of the parsing libraries (without importing them). Cached per process."""
    import importlib.util

    parts = [__version__, sys.version, *_source_stamp(os.path.dirname(os.path.abspath(__file__)))]
    for name in ("yaml", "pydantic_core", "regex", "blake3"):
        try:
            spec = importlib.util.find_spec(name)
            origin = spec.origin if spec is not None else None
            st = os.stat(origin) if origin else None
            parts.append(f"{name}:{origin}:{st.st_size if st else ''}:{st.st_mtime_ns if st else ''}")
        except (ImportError, ValueError, OSError):
            parts.append(f"{name}:absent")
    return blake3.blake3("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()



__all__ = ["tool_stamp"]
