"""Keys of ``.memzoi/config.toml`` that no reader knows: a misspelt key would otherwise be dropped in silence and
its default used, with nothing telling the author why the setting has no effect.

The file has two owners. Memzoi owns ``[project]`` and ``[workflow]`` (reference §3.2, §7: ``[project] id``,
``[workflow] proposal_approval``) and may add keys and sections, so those, and any section this project does not
know, are never judged. The sections this project adds (``[safety]``, ``[promotion]``, ``[resident]``, ``[mcp]``)
are its own: a key none of them declares is reported, naming the key, a close known key and every known key.
``[rules]`` judges its own keys (:func:`memzoi.judge.rules.screen_rules`). A section header that is not known but
close to one of this project's sections (``[promotoin]``) is reported the same way. Each is a problem of its
entry only: the key is ignored and the rest of its section applies ("a bad section costs only itself", and a bad
key only itself).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from .configplain import MEMZOI_SECTIONS


def _close(name: str, known: list[str]) -> str | None:
    found = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
    return found[0] if found else None


def unknown_keys(
    raw: dict[str, Any], own: dict[str, type[BaseModel]], hidden: Iterable[str] = ()
) -> list[tuple[tuple[str, ...], str]]:
    """``[(location, message)]`` for each key of ``raw`` (the parsed TOML) that the section models ``own``
    (section name to model, for the sections this project owns; the keys of ``[rules]`` are judged by the rules)
    do not declare, and for each unknown top-level table whose name is close to one of ``own``'s (see the module
    docstring). A message names the key and the known keys (less ``hidden``: keys this file may not set, reported
    elsewhere), never a value."""
    out: list[tuple[tuple[str, ...], str]] = []
    for section, value in raw.items():
        if section in own:
            if not isinstance(value, dict):
                continue  # not a table: the section's validation reports it
            declared = own[section].model_fields
            known = [k for k in declared if k not in hidden]
            for key in value if section != "rules" else ():  # [rules] judges its keys itself
                if key not in declared:
                    hint = _close(key, known)
                    out.append(
                        (
                            (section, key),
                            f"`{section}.{key}` is not a setting of [{section}]"
                            + (f"; did you mean `{hint}`?" if hint else "")
                            + f" Known keys: {', '.join(known)}. This key is ignored, the other settings apply",
                        )
                    )
        elif section not in MEMZOI_SECTIONS and isinstance(value, dict):
            hint = _close(section, sorted(own))
            if hint:
                out.append(
                    (
                        (section,),
                        f"[{section}] is not a section this project reads; did you mean "
                        f"[{hint}]? Its settings are ignored until the header is fixed",
                    )
                )
    return out
