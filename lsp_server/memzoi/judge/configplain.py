"""The common project configuration told valid without the configuration's models (issue 29: a replayed
``memzoi check`` imports nothing it does not use, and a project's ``config.toml`` most often holds only Memzoi's own
``[project] id``).

:func:`plainly_valid` says yes only for a file whose every top-level entry is one of Memzoi's own sections
(``[project]``, ``[workflow]``: reference §3.2, §7) and whose ``[project] id``, when given, is a string that is not
blank: :func:`memzoi.judge.config.parse_config` finds no problem in such a file (``[project]`` keeps unknown keys
without judging them, ``[workflow]`` is Memzoi's and never judged; ``tests/test_config_plain.py`` holds the two
equal). For anything else it says no, and the caller loads the configuration with its models as before, so no
finding changes.
"""

from __future__ import annotations

import os
from typing import Any

from ..base.smallfile import read_small

#: The project configuration's file name in ``.memzoi`` (defined here, where no model is loaded; the configuration
#: modules take it from here).
CONFIG_NAME = "config.toml"
#: Sections owned by Memzoi: their keys are Memzoi's to define (:mod:`memzoi.judge.config_keys` takes them from here).
MEMZOI_SECTIONS = frozenset({"project", "workflow"})


def plainly_valid_text(text: str) -> bool:
    """Whether the configuration ``text`` is TOML holding only Memzoi's sections, with a ``[project] id`` that is a
    non-blank string when present (see the module docstring). ``False`` means: not decided here."""
    import tomllib  # noqa: PLC0415 lazy: start-up

    try:
        raw: dict[str, Any] = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return False
    if not raw.keys() <= MEMZOI_SECTIONS:
        return False
    if not all(isinstance(v, dict) for v in raw.values()):
        return False
    project = raw.get("project", {})
    return "id" not in project or (isinstance(project["id"], str) and bool(project["id"].strip()))


def plainly_valid(memzoi_dir: str | os.PathLike[str]) -> bool:
    """:func:`plainly_valid_text` of ``<memzoi_dir>/config.toml`` (UTF-8); ``False`` when it cannot be read safely
    (:func:`memzoi.base.smallfile.read_small`: a link, a FIFO, a device or an oversized file is not read)."""
    try:
        text = read_small(os.path.join(memzoi_dir, CONFIG_NAME)).decode("utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return plainly_valid_text(text)


__all__ = ["CONFIG_NAME", "MEMZOI_SECTIONS", "plainly_valid", "plainly_valid_text"]
