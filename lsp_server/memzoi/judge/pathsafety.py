"""Secret-bearing paths: Memzoi's detectors on file and folder names, and the one way a path is shown.

Memzoi's gate runs its write-safety detectors on the path of every projected file as well as on its bytes
(``repository_write_safety/policy.rs::evaluate`` scans ``projection[i].path``, the repository-relative path,
reference §3.2), so a record named after a credential is refused like a record that quotes one. Its
``safety scan`` never prints such a path: it shows ``<redacted-path:HEX>``, HEX being the lowercase hex BLAKE3
of the repository-relative path's bytes (``memzoi-cli/src/commands.rs::safety_scan_report_path``).

Here:

* :func:`name_findings`: the findings of a file's path below its project (``.memzoi/…``), with Memzoi's codes;
* :func:`shown_path`: THE function every output uses to display a path (``memzoi check`` in every format, the
  language server's messages, hovers and logs, the ledger's refusals, the index): the path itself, or its
  ``<redacted-path:…>`` form when it bears a secret. :func:`shown_id` does the same for a record or packet id,
  which is a path too (Memzoi's concept id);
* :func:`shown_local_path`: the same for a path of this machine that is no project file (the project root, the
  memzoi home and the runtime databases under it), where any folder name may bear the secret, and
  :func:`with_shown_paths` for a message that already names such a path (a runtime failure's);
  :func:`local_spellings` and :func:`respelled` for any message or result that may name one of given paths or a
  path below them (the MCP server's tool results, the language server's command results and logs).

The language server still publishes diagnostics to the file's real URI: only text shown to people or stored is
redacted.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from functools import cache, lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any, overload

import blake3

from ..base.findings import Finding, finding

MEMZOI_DIR = ".memzoi"
REDACTED_PREFIX = "<redacted-path:"
_LAST, _INNER, _FIRST = "/" + MEMZOI_DIR, "/" + MEMZOI_DIR + "/", MEMZOI_DIR + "/"


def _parts(path: str | os.PathLike[str]) -> list[str]:
    text = os.fspath(path)
    if os.sep != "/":
        text = text.replace(os.sep, "/")
    return text.split("/")


def repository_path(path: str | os.PathLike[str]) -> str | None:
    """The ``/``-separated path from the nearest ``.memzoi`` component on (``.memzoi/records/a.md``): the path
    relative to the project root, which is what Memzoi scans and hashes. ``None`` outside any ``.memzoi``."""
    text = os.fspath(path)
    if os.sep == "/":
        # the text from the last component that is exactly `.memzoi` on, found by string search (what the split
        # and join below give, in a tenth of the time: every file's path is asked at least twice)
        if text.endswith(_LAST) or text == MEMZOI_DIR:
            return MEMZOI_DIR
        i = text.rfind(_INNER)
        if i >= 0:
            return text[i + 1 :]
        return text if text.startswith(_FIRST) else None
    parts = _parts(text)
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] == MEMZOI_DIR:
            return "/".join(parts[i:])
    return None


@lru_cache(maxsize=16384)
def _secret_hits(text: str) -> tuple[Any, ...]:
    """Memzoi write-safety detector hits (:data:`memzoi.safety.SECRET_CODES`) in ``text``, once per distinct
    string in a process (a file's path is scanned once for its findings, its display and its index row). Only the
    detectors that can report such a code run (:func:`memzoi.safety.scan.secret_hits_of`)."""
    return tuple(_detectors()(text))


@cache
def _detectors() -> Callable[[str], list[Any]]:
    """:func:`memzoi.safety.scan.secret_hits_of`, imported at the first path that is scanned (the detectors load
    then) and kept: an import statement costs 1.5–2 µs at every call, and every file's path is scanned."""
    from ..safety.scan import secret_hits_of  # noqa: PLC0415 lazy: start-up

    return secret_hits_of


def _scanned(path: str | os.PathLike[str]) -> str:
    """What is scanned of a path: below a ``.memzoi`` directory the repository-relative path (as Memzoi), else
    the last component (a checkout's own folders are not the memory's business)."""
    rel = repository_path(path)
    return rel if rel is not None else _parts(path)[-1]


def bears_secret(path: str | os.PathLike[str]) -> bool:
    """True when a detector of Memzoi's write-safety set matches the path (see :func:`_scanned`)."""
    return bool(_secret_hits(_scanned(path)))


def redacted(value: str) -> str:
    """``<redacted-path:HEX>`` for ``value`` (HEX: lowercase hex BLAKE3 of its UTF-8 bytes; names that are not
    UTF-8 arrive surrogate-escaped and hash as their original bytes)."""
    return f"{REDACTED_PREFIX}{blake3.blake3(value.encode('utf-8', 'surrogateescape')).hexdigest()}>"


def redacted_path(path: str | os.PathLike[str]) -> str:
    """The ``<redacted-path:HEX>`` form of ``path`` (HEX hashes its repository-relative part, from ``.memzoi`` on,
    else the path as given), whether or not it bears a secret: what :func:`shown_path` shows for one that does."""
    text = os.fspath(path)
    rel = repository_path(text)
    return redacted(rel if rel is not None else text)


def shown_path(path: str | os.PathLike[str]) -> str:
    """How ``path`` (a file path, a display path or a ``file:`` URI) is displayed or stored: unchanged, or
    ``<redacted-path:HEX>`` when it bears a secret. HEX hashes the repository-relative path (from ``.memzoi``
    on), exactly as Memzoi's ``safety scan`` does, so both tools print the same marker for the same file; outside
    a ``.memzoi`` directory it hashes the path as given."""
    text = os.fspath(path)
    return redacted_path(text) if bears_secret(text) else text


def shown_local_path(path: str | os.PathLike[str]) -> str:
    """How a path of this machine that is no project file is displayed: the project root, the memzoi home and what
    lies under it (runtime databases, folders, locks). Unchanged, or :func:`redacted_path`'s
    ``<redacted-path:HEX>`` when :func:`shown_path` would redact it or when any one of its names bears a secret:
    outside ``.memzoi``, :func:`shown_path` scans only the last name (a checkout's folders are no record's name),
    but a runtime path carries the memzoi home's folders and the project folder's name (its runtime key), and
    printing the path prints them. Each name is scanned once per process (:func:`_secret_hits`)."""
    text = os.fspath(path)
    if bears_secret(text) or any(_secret_hits(part) for part in _parts(text) if part):
        return redacted_path(text)
    return text


def with_shown_paths(message: str, path: str | os.PathLike[str] | None) -> str:
    """``message`` (a runtime failure's, which names ``path``, its folder or its nearest existing ancestor) with
    each of those spelled as :func:`shown_local_path` shows it. ``None``: ``message`` unchanged."""
    if path is None:
        return message
    # only the forms the message names are scanned (a folder's text is a prefix of its path's: named too)
    shown: str = respelled(message, local_spellings(*(named for named in _named_forms(path) if named in message)))
    return shown


def _named_forms(path: str | os.PathLike[str]) -> list[str]:
    """``path`` as given, absolute, and each of its folders: the texts a message about it may hold."""
    given = os.fspath(path)
    text = os.path.abspath(given)
    return [named for named in (given, text, *(str(p) for p in Path(text).parents)) if len(named) > 1]


#: ``(text, shown)`` pairs of :func:`local_spellings`, longest text first.
Spellings = tuple[tuple[str, str], ...]


def local_spellings(*paths: str | os.PathLike[str] | None) -> Spellings:
    """How each of ``paths`` (paths of this machine; ``None`` skipped), its absolute form and each of their folders
    is spelled where :func:`shown_local_path` would not show it as it is: ``(text, shown)`` pairs, longest text
    first, so that a path is respelled before the folders it lies in. Empty (the usual case) when no name of any of
    them bears a secret; :func:`respelled` then changes nothing."""
    pairs: dict[str, str] = {}
    for path in paths:
        for named in _named_forms(path) if path is not None else ():
            if named not in pairs:
                pairs[named] = shown_local_path(named)
    return tuple(sorted(((k, v) for k, v in pairs.items() if k != v), key=lambda kv: -len(kv[0])))


def respelled(value: Any, spellings: Spellings, keep: Callable[[str], bool] | None = None) -> Any:
    """``value`` (a string, or JSON data: dicts, lists, scalars) with every occurrence of a text of ``spellings``
    (:func:`local_spellings`) in its strings replaced by its shown form: one pass over a message or a result that
    may name a local path anywhere (a refusal's message, a tool's result, a log line). A dict value whose key
    ``keep`` accepts is left as it is (a ``uri`` the editor must open). ``value`` itself is not changed; it is
    returned as it is when ``spellings`` is empty."""
    if not spellings:
        return value
    if isinstance(value, str):
        for named, shown in spellings:
            if named in value:
                value = value.replace(named, shown)
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(respelled(v, spellings, keep) for v in value)
    if isinstance(value, dict):
        return {
            k: v if keep is not None and isinstance(k, str) and keep(k) else respelled(v, spellings, keep)
            for k, v in value.items()
        }
    return value


def project_spellings(*roots: str | os.PathLike[str]) -> Spellings:
    """:func:`local_spellings` of the places of this machine that an output about the projects at ``roots`` may
    name: each root, its runtime directory (``<memzoi home>/projects/<repository key>``: the key carries the
    checkout's folder name, lower-cased), the memzoi home (the resident database and locks) and Zuno's configuration
    folder (the global resident file, the user's ``memzoi.toml``). Cached per roots, memzoi home and Zuno folder;
    the first time per root derives its runtime key (git, cached for the process)."""
    return _spellings_of(_places(roots))


#: :func:`project_spellings` by :func:`_places`; emptied when it holds :data:`_SPELLINGS_KEPT` entries.
_SPELLINGS: dict[tuple[tuple[str, ...], str, str], Spellings] = {}
_SPELLINGS_KEPT = 64


def _places(roots: Iterable[str | os.PathLike[str]]) -> tuple[tuple[str, ...], str, str]:
    """The key of :data:`_SPELLINGS`: the roots, the memzoi home and Zuno's folder, as text."""
    runtime = _runtime()
    return tuple(os.fspath(r) for r in roots), os.fspath(runtime.memzoi_home()), os.fspath(runtime.zuno_config_dir())


@cache
def _runtime() -> ModuleType:
    """:mod:`memzoi.base.runtime`, imported at the first answer asked about and kept (an import statement costs
    1.5–2 µs at every call, and every tool result and command answer asks)."""
    from ..base import runtime  # noqa: PLC0415 lazy: start-up

    return runtime


def _spellings_of(places: tuple[tuple[str, ...], str, str]) -> Spellings:
    found = _SPELLINGS.get(places)
    if found is None:
        roots, home, zuno = places
        found = local_spellings(home, zuno, *roots, *(_runtime_dir(home, root) for root in roots))
        if len(_SPELLINGS) >= _SPELLINGS_KEPT:
            _SPELLINGS.clear()
        _SPELLINGS[places] = found
    return found


def _runtime_dir(home: str, root: str) -> str | None:
    """``<home>/projects/<repository key>`` of ``root``; ``None`` when its key cannot be derived (an odd path:
    nothing names a runtime directory that cannot be found)."""
    try:
        return os.path.join(home, "projects", _runtime().cached_keys(root).repository_key)
    except Exception:  # answering must never fail on a path: the root and the home are still respelled
        return None


def shown_for_projects(
    value: Any, roots: Iterable[str | os.PathLike[str]], keep: Callable[[str], bool] | None = None
) -> Any:
    """``value`` (a message, or JSON data) about the projects at ``roots`` as :func:`respelled` spells it with
    :func:`project_spellings`: the one call where a result, a refusal or a log line leaves for a client (the MCP
    server's tools, the language server's commands and log lines). The spellings are worked out the first time a
    value names one of the places (its root, the memzoi home, Zuno's folder): a value that names none before then
    is returned as it is, with no name scanned (a log line at start-up loads no detector). ``keep``: as
    :func:`respelled`."""
    places = _places(roots)
    spellings = _SPELLINGS.get(places)
    if spellings is None:
        roots_, home, zuno = places
        named = {p for place in (*roots_, home, zuno) for p in (place, os.path.abspath(place)) if len(p) > 1}
        if not _names_any(value, named):
            return value
        spellings = _spellings_of(places)
    return respelled(value, spellings, keep)


def _names_any(value: Any, texts: set[str]) -> bool:
    """True when a string of ``value`` (JSON data) contains one of ``texts``."""
    if isinstance(value, str):
        return any(t in value for t in texts)
    if isinstance(value, dict):
        return any(_names_any(v, texts) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_names_any(v, texts) for v in value)
    return False


@overload
def shown_id(ident: str) -> str: ...
@overload
def shown_id(ident: None) -> None: ...
def shown_id(ident: str | None) -> str | None:
    """A record or packet id (a path below ``records/`` or a proposals folder) as it may be displayed: unchanged,
    or ``<redacted-path:HEX>`` (BLAKE3 of the id) when a detector matches it."""
    if not ident or not _secret_hits(ident):
        return ident
    return redacted(ident)


def name_findings(path: str | os.PathLike[str]) -> list[Finding]:
    """Findings of the path of a file below a ``.memzoi`` directory: one per Memzoi write-safety detector match
    in its repository-relative path (file and folder names), with Memzoi's code and error severity, spanning the
    start of the file (a name has no place in the text). Empty outside ``.memzoi``. Messages never repeat the
    name."""
    rel = repository_path(path)
    if rel is None:
        return []
    out: list[Finding] = []
    name_start = len(rel) - len(rel.rsplit("/", 1)[-1])
    for h in _secret_hits(rel):
        # Memzoi's entropy rule reads ``/`` as part of a token, so one hit can span folders and the file name.
        where = (
            "file name"
            if h.start >= name_start
            else "name of a folder above it"
            if h.end <= name_start
            else "file path"
        )
        out.append(
            finding(
                h.code,
                f"the {where} contains a {h.label}: Memzoi scans file paths too and refuses this file; rename it "
                "(e.g. `git mv`); if it is a credential, rotate it and remove it from the git history (the path is "
                "shown redacted meanwhile)",
                0,
                0,
                field="path",
                detector=h.label,
            )
        )
    return out


__all__ = [
    "REDACTED_PREFIX",
    "bears_secret",
    "local_spellings",
    "name_findings",
    "project_spellings",
    "redacted",
    "repository_path",
    "respelled",
    "shown_id",
    "shown_local_path",
    "shown_for_projects",
    "shown_path",
    "with_shown_paths",
]
