"""The ``memzoi/import`` manifest of ``memzoi import plan|apply``, read strictly (Memzoi's lifecycle document,
"Import planning"; the manifest fields and normalization are Memzoi's ``crates/memzoi-core/src/import.rs``
``ImportDocument``/``normalize_candidate`` and its reference page "Classified import")::

    version: memzoi/import            # exact (current-schema-only: `memzoi/import-v1` is refused)
    origin_key: adr-sync:2026-07-18   # required: the source event this import records, imported once
    sources:                          # at least one; each needs a path, url or ref
      - path: imports/source.yml      # POSIX project-relative (no `.`/`..`, no root or drive, no `\\`)
    candidates:                       # at least one
      - destination: repo             # repo | local | session | discard | needs_review
        reason: durable project convention
        type: decision                # optional when it can be inferred (below)
        lane: semantic                # optional
        title: Explicit candidate title
        body: Explicit candidate body
        sensitivity: repo-safe        # omitted = unknown
        scope: {kind: repo, id: null, paths: [src/**]}   # optional; default {kind: repo}
        tags: [workflow]              # optional

Unknown keys are refused at every level (Memzoi: ``deny_unknown_fields``). Title, body and reason are trimmed and
required; tags and scope paths are trimmed, sorted and deduplicated; sources are trimmed and sorted. Inference
(Memzoi's, deliberately narrow): without ``type``, lane ``session``/``episodic`` gives ``episode`` and
``procedural`` gives ``procedure``; without ``lane``, ``procedure`` gives ``procedural``, ``episode``
``episodic``, other types ``semantic``; a ``session`` destination is always ``episode``/``session``.

The seed names the manifest version ``memzoi/import`` and a required source-event ``origin_key``; the older
``memzoi/import-v1`` page has neither. This project follows the seed (the newest statement) and refuses the old
version with a message saying how to upgrade the file by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, get_args

from ..ledger import Refusal
from ..models.common import Lane, MemoryType, ScopeKind, SensitivityName
from .session_input import DESTINATIONS, encodable, yaml_document

VERSION = "memzoi/import"
CODE = "invalid_import_manifest"
_TYPES: tuple[str, ...] = get_args(MemoryType)
_LANES: tuple[str, ...] = get_args(Lane)
_SCOPES: tuple[str, ...] = get_args(ScopeKind)
_SENSITIVITIES: tuple[str, ...] = get_args(SensitivityName)
_TOP = {"version", "origin_key", "sources", "candidates"}
_SOURCE = {"path", "url", "ref"}
_SCOPE = {"kind", "id", "paths"}
_CANDIDATE = {"destination", "reason", "type", "lane", "title", "body", "sensitivity", "scope", "tags"}


@dataclass(frozen=True)
class ImportCandidate:
    """One normalized candidate (Memzoi's ``ImportCandidate`` before duplicate checks); ``index`` is its position."""

    index: int
    destination: str
    reason: str
    type: str
    lane: str
    title: str
    body: str
    sensitivity: str
    scope: dict[str, Any]
    tags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ImportManifest:
    """The parsed manifest: ``origin_key``, normalized ``sources`` (``{path|url|ref}`` dicts) and candidates."""

    origin_key: str
    sources: list[dict[str, str]]
    candidates: list[ImportCandidate]

    def canonical(self) -> dict[str, Any]:
        """The normalized manifest as JSON-ready data (what an identical retry repeats)."""
        return {
            "version": VERSION,
            "origin_key": self.origin_key,
            "sources": self.sources,
            "candidates": [c.__dict__ for c in self.candidates],
        }


def _fail(where: str, what: str) -> Refusal:
    return Refusal(
        CODE,
        f"{where}: {what}; nothing was written. The manifest is YAML `{{version: {VERSION}, "
        "origin_key, sources, candidates}` (see docs/runtime-plane.md)",
    )


def _str(value: Any, where: str, name: str, *, required: bool = False) -> str | None:
    if value is None:
        if required:
            raise _fail(where, f"`{name}` is required")
        return None
    if not isinstance(value, str):
        raise _fail(where, f"`{name}` must be a string")
    if not encodable(value):
        raise _fail(where, f"`{name}` holds a lone surrogate (a `\\u` escape such as `\\uD800`); remove it")
    if required and not value.strip():
        raise _fail(where, f"`{name}` must not be empty")
    return value.strip()


def _mapping(value: Any, where: str, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(where, "must be a mapping")
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise _fail(where, f"unknown field(s) {', '.join(map(str, unknown))}; allowed: {', '.join(sorted(allowed))}")
    return value


def relative_path_problem(path: str) -> str | None:
    """Why ``path`` is not a POSIX project-relative path (Memzoi's ``validate_relative_path``), else ``None``."""
    if not path or "\\" in path or path.startswith("/") or (len(path) >= 2 and path[1] == ":" and path[0].isalpha()):
        return "must be a POSIX project-relative path"
    if any(part in (".", "..") for part in path.split("/")):
        return "must not contain `.` or `..` components"
    return None


def _path(value: Any, where: str, name: str) -> str:
    text = _str(value, where, name, required=True) or ""
    problem = relative_path_problem(text)
    if problem:
        raise _fail(where, f"`{name}` {problem}")
    return text


def _sources(value: Any, where: str) -> list[dict[str, str]]:
    if not isinstance(value, list) or not value:
        raise _fail(where, "`sources` must be a non-empty list (each with a path, url or ref)")
    out = []
    for i, item in enumerate(value):
        at = f"{where}: sources[{i}]"
        item = _mapping(item, at, _SOURCE)
        src: dict[str, str] = {}
        if item.get("path") is not None:
            src["path"] = _path(item["path"], at, "path")
        for key in ("url", "ref"):
            if item.get(key) is not None:
                src[key] = _str(item[key], at, key, required=True) or ""
        if not src:
            raise _fail(at, "needs a path, url or ref")
        out.append(src)
    return sorted(out, key=lambda s: (s.get("path", ""), s.get("url", ""), s.get("ref", "")))


def _strings(value: Any, where: str, name: str, *, paths: bool = False) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _fail(where, f"`{name}` must be a list")
    out = []
    for v in value:
        text = _path(v, where, name) if paths else _str(v, where, name, required=True)
        out.append(text or "")
    return sorted(set(out))


def _scope(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {"kind": "repo", "id": None, "paths": []}
    item = _mapping(value, f"{where}: scope", _SCOPE)
    kind = item.get("kind", "repo")
    if kind not in _SCOPES:
        raise _fail(where, f"`scope.kind` must be one of {', '.join(_SCOPES)}")
    ident = _str(item.get("id"), where, "scope.id")
    if ident is not None and not ident:
        raise _fail(where, "`scope.id` must not be empty")
    return {"kind": kind, "id": ident, "paths": _strings(item.get("paths"), where, "scope.paths", paths=True)}


def _type_and_lane(item: dict[str, Any], dest: str, at: str) -> tuple[str, str]:
    type_, lane = item.get("type"), item.get("lane")
    if type_ is not None and type_ not in _TYPES:
        raise _fail(at, f"`type` must be one of {', '.join(_TYPES)}")
    if lane is not None and lane not in _LANES:
        raise _fail(at, f"`lane` must be one of {', '.join(_LANES)}")
    if dest == "session":
        return "episode", "session"
    if type_ is None:
        type_ = {"session": "episode", "episodic": "episode", "procedural": "procedure"}.get(lane or "")
        if type_ is None:
            raise _fail(at, "`type` is required (it can be inferred only from lane episodic, session or procedural)")
    if lane is None:
        lane = {"procedure": "procedural", "episode": "episodic"}.get(type_, "semantic")
    return type_, lane


def _candidate(i: int, raw: Any, where: str) -> ImportCandidate:
    at = f"{where}: candidates[{i}]"
    item = _mapping(raw, at, _CANDIDATE)
    dest = item.get("destination")
    if dest not in DESTINATIONS:
        raise _fail(at, f"`destination` must be one of {', '.join(DESTINATIONS)}")
    title = _str(item.get("title"), at, "title", required=True) or ""
    if "\n" in title:
        raise _fail(at, "`title` must be one line")
    body = _str(item.get("body"), at, "body", required=True) or ""
    reason = _str(item.get("reason"), at, "reason", required=True) or ""
    sens = item.get("sensitivity", "unknown")
    if sens not in _SENSITIVITIES:
        raise _fail(at, f"`sensitivity` must be one of {', '.join(_SENSITIVITIES)}")
    type_, lane = _type_and_lane(item, dest, at)
    return ImportCandidate(
        index=i,
        destination=dest,
        reason=reason,
        type=type_,
        lane=lane,
        title=title,
        body=body,
        sensitivity=sens,
        scope=_scope(item.get("scope"), at),
        tags=_strings(item.get("tags"), at, "tags"),
    )


def parse_import_manifest(text: str, where: str) -> ImportManifest:
    """Parse ``text`` (YAML 1.2) as a ``memzoi/import`` manifest named ``where`` in messages. Raises
    :class:`Refusal` (``invalid_import_manifest``) naming the field and what to do, never echoing a value."""
    if not text.strip():
        raise _fail(where, "the manifest is empty")
    doc = yaml_document(text, lambda what: _fail(where, what))
    doc = _mapping(doc, where, _TOP)
    version = doc.get("version")
    if version != VERSION:
        hint = (
            " (a pre-1.0 `memzoi/import-v1` manifest: set `version: memzoi/import` and add the source event's "
            "`origin_key` by hand)"
            if version == "memzoi/import-v1"
            else ""
        )
        raise _fail(where, f"`version` must be exactly `{VERSION}`{hint}")
    origin_key = _str(doc.get("origin_key"), where, "origin_key", required=True) or ""
    if origin_key == "owner-command:":
        raise _fail(where, "`origin_key` must name the source event (not the bare `owner-command:` prefix)")
    sources = _sources(doc.get("sources"), where)
    items = doc.get("candidates")
    if not isinstance(items, list) or not items:
        raise _fail(where, "`candidates` must be a non-empty list")
    return ImportManifest(origin_key, sources, [_candidate(i, c, where) for i, c in enumerate(items)])
