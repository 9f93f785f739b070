"""Legacy profiles: detection (``legacy_profile``) and the upgrade of a legacy record to the current profile.

Legacy forms (reference §0): ``profile: memzoi/v0`` or ``memzoi/v1``, a ``version:`` key, no profile at all,
``status: current``, confidence labels (``confirmed``/``likely``/``uncertain``), ``expires``/``expires_at``.
The upgrade is a minimal edit of the frontmatter lines, as Memzoi's own migration produced it (the current
corpus records are that migration's output): missing ``id``/``kind``/``profile``/``retention``/``origin`` are
inserted at the top, ``lane: semantic`` after ``type``, ``content_class: general_repo_knowledge`` after
``visibility``; everything else (title, body, provenance, timestamps, quoting) is kept byte for byte.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field

from .document import Document
from .findings import TextEdit
from .yaml12 import PlainScalar, YMap, YScalar, quote_string, resolve_plain

LEGACY_PROFILES = frozenset({"memzoi/v0", "memzoi/v1"})
CONFIDENCE_LABELS = {"confirmed": "1", "likely": "0.75", "uncertain": "0.4"}
_PLAIN_SAFE = re.compile(r"^[A-Za-z0-9_./][A-Za-z0-9_./:@+-]*$")


def legacy_reasons(data: dict) -> list[str]:
    """Why ``data`` (frontmatter as plain Python) is a legacy document; empty when it is not legacy."""
    reasons: list[str] = []
    profile = data.get("profile")
    if "profile" not in data and "kind" not in data and ("type" in data or "title" in data):
        reasons.append("it has no `profile`")
    elif isinstance(profile, str) and profile != "memzoi" and (profile in LEGACY_PROFILES or profile.startswith("memzoi/")):
        reasons.append(f"profile `{profile}` is a legacy profile")
    if "version" in data:
        reasons.append("it has a `version` key")
    if data.get("status") == "current":
        reasons.append("status `current` is the legacy spelling of `active`")
    if isinstance(data.get("confidence"), str) and data["confidence"] in CONFIDENCE_LABELS:
        reasons.append("confidence is a label, not a number")
    for key in ("expires", "expires_at"):
        if key in data:
            reasons.append(f"`{key}` is now `retention.explicit_expires_at`")
    return reasons


def upgrade_ignores(data: dict) -> frozenset[tuple[str, tuple]]:
    """``(code, loc)`` schema findings that the upgrade resolves, so a legacy file reports only what remains."""
    out: set[tuple[str, tuple]] = {
        ("missing_key", (k,)) for k in ("id", "kind", "profile", "lane", "content_class", "retention", "origin")
    }
    out |= {("unknown_key", (k,)) for k in ("version", "expires", "expires_at")}
    out |= {("unknown_key", ("retention", "policy_version")), ("unknown_key", ("origin", "version"))}
    out |= {("invalid_value", ("profile",)), ("missing_key", ("origin", "origin_key")), ("missing_key", ("origin", "route"))}
    if data.get("status") == "current":
        out.add(("invalid_value", ("status",)))
    if isinstance(data.get("confidence"), str) and data["confidence"] in CONFIDENCE_LABELS:
        out.add(("invalid_value", ("confidence",)))
    return frozenset(out)


def yaml_scalar(value: str) -> str:
    """Render a string scalar: bare when that reads back as the same string, else a JSON string literal."""
    if _PLAIN_SAFE.match(value) and ": " not in value and not value.endswith(":") and isinstance(resolve_plain(value), str) \
            and value.lower() not in ("yes", "no", "on", "off", "y", "n"):
        return value
    return quote_string(value)


def concept_slug(title: str) -> str:
    """Memzoi's ``title_to_concept_slug``: lower-case, ASCII alphanumerics kept, other runs become one ``-``."""
    out: list[str] = []
    for ch in title:
        for low in ch.lower():
            if low.isascii() and low.isalnum():
                out.append(low)
            elif out and out[-1] != "-":
                out.append("-")
    return "".join(out).rstrip("-")


@dataclass
class Upgrade:
    """The upgraded text, the edits that produce it from the original, and a human list of changes."""

    text: str
    edits: list[TextEdit]
    changes: list[str] = field(default_factory=list)

    def diff(self, original: str, path: str) -> str:
        """A unified diff from ``original`` to the upgraded text."""
        return "".join(
            difflib.unified_diff(
                original.splitlines(keepends=True), self.text.splitlines(keepends=True), f"a/{path}", f"b/{path}"
            )
        )


class UpgradeError(ValueError):
    """The document cannot be upgraded automatically (message says why and what to do)."""


def upgrade_record(doc: Document, identity: str | None) -> Upgrade:
    """Upgrade a legacy record's frontmatter to the current profile.

    ``identity`` is the record's path id (used for a missing ``id`` and the origin key); without it the id is
    derived from the title as Memzoi does. Raises :class:`UpgradeError` when the document is not a parsed
    legacy record.
    """
    root = doc.mapping
    data = doc.data
    if root is None or data is None or doc.fm_start is None or doc.fm_end is None:
        raise UpgradeError("the frontmatter must parse as a YAML mapping before it can be upgraded; fix the YAML errors first")
    if data.get("kind") not in (None, "memory"):
        raise UpgradeError("only records (kind: memory) can be upgraded")
    if not legacy_reasons(data):
        raise UpgradeError("the record already uses the current profile")
    text = doc.text
    nl = doc.newline
    spans = _entry_spans(doc, root)
    edits: list[TextEdit] = []
    changes: list[str] = []
    ident = data.get("id") if isinstance(data.get("id"), str) else None
    record_id = (ident or identity or concept_slug(str(data.get("title") or "")) or "record").strip()

    def replace_entry(key: str, new: str) -> None:
        s, e = spans[key]
        edits.append(TextEdit(s, e, new))

    top: list[str] = []
    if "id" not in data:
        top.append(f"id: {yaml_scalar(record_id)}{nl}")
        changes.append(f"added id `{record_id}`")
    if "kind" not in data:
        top.append(f"kind: memory{nl}")
        changes.append("added kind: memory")
    if "version" in data:
        replace_entry("version", "")
        changes.append("removed the legacy `version` key")
    if data.get("profile") != "memzoi":
        if "profile" in data:
            replace_entry("profile", f"profile: memzoi{nl}")
        else:
            top.append(f"profile: memzoi{nl}")
        changes.append("set profile: memzoi")
    retention = dict(data["retention"]) if isinstance(data.get("retention"), dict) else {}
    retention.pop("policy_version", None)
    for key in ("expires", "expires_at"):
        if key in data:
            if data[key] is not None:
                retention["explicit_expires_at"] = str(data[key])
            replace_entry(key, "")
            changes.append(f"moved `{key}` to retention.explicit_expires_at")
    rendered_retention = _block("retention", retention, nl)
    if "retention" in data:
        s, e = spans["retention"]
        if text[s:e] != rendered_retention:
            replace_entry("retention", rendered_retention)
            changes.append("removed legacy retention keys")
    else:
        top.append(rendered_retention)
        changes.append("added retention")
    origin = dict(data["origin"]) if isinstance(data.get("origin"), dict) else {}
    origin.pop("version", None)
    origin.setdefault("origin_key", f"repository-record:{record_id}")
    origin.setdefault("route", "repository_materialization")
    rendered_origin = _block("origin", origin, nl)
    if "origin" in data:
        s, e = spans["origin"]
        if text[s:e] != rendered_origin:
            replace_entry("origin", rendered_origin)
            changes.append("removed legacy origin keys")
    else:
        top.append(rendered_origin)
        changes.append("added origin (route repository_materialization)")
    if top:
        edits.append(TextEdit(doc.fm_start, doc.fm_start, "".join(top)))
    if "lane" not in data:
        at = spans["type"][1] if "type" in spans else doc.fm_start
        edits.append(TextEdit(at, at, f"lane: semantic{nl}"))
        changes.append("added lane: semantic (the legacy default)")
    if "content_class" not in data:
        after = next((k for k in ("visibility", "scope", "status") if k in spans), None)
        at = spans[after][1] if after else doc.fm_start
        edits.append(TextEdit(at, at, f"content_class: general_repo_knowledge{nl}"))
        changes.append("added content_class: general_repo_knowledge (review that the record is repository knowledge)")
    if data.get("status") == "current":
        node = root.entries["status"][1]
        edits.append(TextEdit(node.start, node.end, "active"))
        changes.append("status current → active")
    conf = data.get("confidence")
    if isinstance(conf, PlainScalar) and conf in CONFIDENCE_LABELS:
        node = root.entries["confidence"][1]
        edits.append(TextEdit(node.start, node.end, CONFIDENCE_LABELS[conf]))
        changes.append(f"confidence {conf} → {CONFIDENCE_LABELS[conf]}")
    return Upgrade(apply_edits(text, edits), sorted(edits, key=lambda e: (e.start, e.end)), changes)


def apply_edits(text: str, edits: list[TextEdit]) -> str:
    """Apply non-overlapping edits to ``text`` (insertions at one offset keep their list order)."""
    out = text
    for e in sorted(enumerate(edits), key=lambda p: (p[1].start, p[1].end, p[0]), reverse=True):
        edit = e[1]
        out = out[: edit.start] + edit.new_text + out[edit.end :]
    return out


def _block(key: str, values: dict, nl: str) -> str:
    if not values:
        return f"{key}: {{}}{nl}"
    lines = [f"{key}:{nl}"]
    for k, v in values.items():
        if isinstance(v, dict):
            lines.append(f"  {k}:{nl}")
            lines.extend(f"    {kk}: {yaml_scalar(str(vv))}{nl}" for kk, vv in v.items())
        else:
            lines.append(f"  {k}: {yaml_scalar(str(v))}{nl}")
    return "".join(lines)


def _entry_spans(doc: Document, root: YMap) -> dict[str, tuple[int, int]]:
    """For each top-level key: ``(start of its line, start of the next key's line)`` — the lines it occupies."""
    lines = doc.lines
    keys = [k for k in root.order if isinstance(k, YScalar)]
    out: dict[str, tuple[int, int]] = {}
    for i, key in enumerate(keys):
        start = lines.offset(lines.position(key.start)[0], 0)
        if i + 1 < len(keys):
            end = lines.offset(lines.position(keys[i + 1].start)[0], 0)
        else:
            line = lines.position(max(doc.fm_end - 1, doc.fm_start))[0]
            end = lines.starts[line + 1] if line + 1 < len(lines.starts) else len(doc.text)
            end = min(end, doc.fm_close[0] if doc.fm_close else end)
        out.setdefault(str(key.value), (start, end))
    return out
