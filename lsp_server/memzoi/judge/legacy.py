"""Legacy profiles: detection (``legacy_profile``) and the upgrade of a legacy record or proposal packet.

Legacy forms (reference §0): ``profile: memzoi/v0`` or ``memzoi/v1``, a ``version:`` key, no profile at all,
``status: current``, confidence labels (``confirmed``/``likely``/``uncertain``), ``expires``/``expires_at``.

The upgrade is a minimal edit of the frontmatter lines, as Memzoi's own migrations in its history produced them
(the current corpus records and example packets are that output): ``version`` goes, ``profile`` becomes
``memzoi``, ``retention``/``origin`` lose their ``policy_version``/``version`` keys or, when missing, are inserted
right after ``profile``; a missing ``id``/``kind`` goes at the top, ``lane: semantic`` after ``type`` and
``content_class: general_repo_knowledge`` after ``visibility`` (records) or ``sensitivity`` (packets).
Everything else (title, body, provenance, timestamps, quoting) is kept byte for byte.

A record's origin is keyed by its path concept id (``repository-record:<path id>``, route
``repository_materialization``), which Memzoi uses even where the frontmatter ``id`` differs; a packet's by its
id (``repository-proposal:<id>``, route ``repository_proposal``). Missing retention gets Memzoi's creation
defaults (``retention_facts_for_creation``): ``{}`` for semantic and procedural lanes, ``occurred_at`` (episodic)
or ``started_at`` (session) set to ``timestamp``.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from ..base.findings import TextEdit
from ..read.document import Document
from ..read.yaml12 import PlainScalar, YMap, YScalar, resolve_plain
from ..read.yaml_quote import quote_string
from .pathsafety import shown_id
from .workspace import Placement, Role

LEGACY_PROFILES = frozenset({"memzoi/v0", "memzoi/v1"})
#: Memzoi's legacy confidence labels and the numbers its migration wrote for them (``confirmed`` became ``1.0``).
CONFIDENCE_LABELS = {"confirmed": "1.0", "likely": "0.75", "uncertain": "0.4"}
_PLAIN_SAFE = re.compile(r"^[A-Za-z0-9_./][A-Za-z0-9_./:@+-]*$")
#: a run of the characters of a lower-cased ASCII title that its concept slug does not keep
_NOT_SLUG = re.compile(r"[^a-z0-9]+")
#: Keys of the legacy ``retention``/``origin`` blocks that the current profile no longer has.
_DROPPED_CHILD = {"retention": "policy_version", "origin": "version"}


def legacy_reasons(data: dict[str, Any]) -> list[str]:
    """Why ``data`` (frontmatter as plain Python) is a legacy document; empty when it is not legacy."""
    reasons: list[str] = []
    profile = data.get("profile")
    if "profile" not in data and "kind" not in data and ("type" in data or "title" in data):
        reasons.append("it has no `profile`")
    elif (
        isinstance(profile, str)
        and profile != "memzoi"
        and (profile in LEGACY_PROFILES or profile.startswith("memzoi/"))
    ):
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


def upgrade_ignores(data: dict[str, Any]) -> frozenset[tuple[str, tuple[Any, ...]]]:
    """``(code, loc)`` schema findings that the upgrade resolves, so a legacy file reports only what remains."""
    out: set[tuple[str, tuple[Any, ...]]] = {
        ("missing_key", (k,)) for k in ("id", "kind", "profile", "lane", "content_class", "retention", "origin")
    }
    out |= {("unknown_key", (k,)) for k in ("version", "expires", "expires_at")}
    out |= {("unknown_key", ("retention", "policy_version")), ("unknown_key", ("origin", "version"))}
    out |= {
        ("invalid_value", ("profile",)),
        ("missing_key", ("origin", "origin_key")),
        ("missing_key", ("origin", "route")),
    }
    if data.get("status") == "current":
        out.add(("invalid_value", ("status",)))
    if isinstance(data.get("confidence"), str) and data["confidence"] in CONFIDENCE_LABELS:
        out.add(("invalid_value", ("confidence",)))
    return frozenset(out)


def yaml_scalar(value: str) -> str:
    """Render a string scalar: bare when that reads back as the same string, else a JSON string literal."""
    if (
        _PLAIN_SAFE.match(value)
        and ": " not in value
        and not value.endswith(":")
        and isinstance(resolve_plain(value), str)
        and value.lower() not in ("yes", "no", "on", "off", "y", "n")
    ):
        return value
    return quote_string(value)


def concept_slug(title: str) -> str:
    """Memzoi's ``title_to_concept_slug``: lower-case, ASCII alphanumerics kept, other runs become one ``-``."""
    if title.isascii():
        # the same for ASCII, where lower-casing maps one character to one: each run of other characters becomes
        # one ``-``, and a leading or trailing one none (``tests/test_legacy_upgrade.py`` holds it to :func:`slug_by_characters`)
        return _NOT_SLUG.sub("-", title.lower()).strip("-")
    return slug_by_characters(title)


def slug_by_characters(title: str) -> str:
    """Memzoi's ``title_to_concept_slug`` character by character: the general path of :func:`concept_slug`, and the
    rule its ASCII path is held to."""
    out: list[str] = []
    for ch in title:
        for low in ch.lower():
            if low.isascii() and low.isalnum():
                out.append(low)
            elif out and out[-1] != "-":
                out.append("-")
    return "".join(out).rstrip("-")


#: The longest file name (bytes) the file systems memzoi runs on accept (POSIX ``NAME_MAX`` on Linux and macOS).
NAME_MAX = 255


def record_name_bytes(title: str) -> int | None:
    """The UTF-8 length of the record file name ``<concept_slug(title)>.md`` that applying a create or supersede
    proposal titled ``title`` writes (Memzoi's ``title_to_concept_slug``; the id is not shortened, reference §2.5)
    when it is over :data:`NAME_MAX` bytes, else ``None``."""
    size = len(f"{concept_slug(title)}.md".encode())
    return size if size > NAME_MAX else None


def creation_retention(lane: Any, timestamp: Any) -> dict[str, str]:
    """Memzoi's ``retention_facts_for_creation`` (reference §6): ``started_at`` (session) or ``occurred_at``
    (episodic) set to the creation ``timestamp``; no facts for semantic and procedural lanes."""
    if isinstance(timestamp, str) and timestamp:
        if lane == "session":
            return {"started_at": timestamp}
        if lane == "episodic":
            return {"occurred_at": timestamp}
    return {}


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


def upgrade_kind(doc: Document, placement: Placement) -> str:
    """``proposal`` for a packet (by its folder, or by ``kind: proposal`` outside the managed folders), else
    ``memory``."""
    if placement.role.is_proposal:
        return "proposal"
    if placement.role is Role.OTHER and (doc.data or {}).get("kind") == "proposal":
        return "proposal"
    return "memory"


def upgrade_legacy(doc: Document, placement: Placement) -> Upgrade:
    """Upgrade a legacy record or proposal packet to the current profile, as Memzoi's migration did.

    ``placement`` gives the file's role and path identity (a record's concept id, a packet's file id); without
    one a record's id comes from its title, as Memzoi derives it. This is the one upgrade used by
    ``memzoi upgrade`` and by the editor's quick fix. Raises :class:`UpgradeError` when the document is not a
    parsed legacy record or packet.
    """
    root = doc.mapping
    data = doc.data
    if root is None or data is None or doc.fm_start is None or doc.fm_end is None:
        raise UpgradeError(
            "the frontmatter must parse as a YAML mapping before it can be upgraded; fix the YAML errors first"
        )
    kind = upgrade_kind(doc, placement)
    if data.get("kind") not in (None, kind):
        where = "a proposal folder" if kind == "proposal" else "the records folder"
        raise UpgradeError(f"a file in {where} must have `kind: {kind}`; fix `kind` or move the file")
    if not legacy_reasons(data):
        raise UpgradeError(f"the {'packet' if kind == 'proposal' else 'record'} already uses the current profile")
    return _Upgrader(doc, (doc.fm_start, doc.fm_end), root, data, kind, placement).run()


class _Upgrader:
    """Collects the edits of one upgrade (see :func:`upgrade_legacy`)."""

    def __init__(
        self,
        doc: Document,
        block: tuple[int, int],
        root: YMap,
        data: dict[str, Any],
        kind: str,
        placement: Placement,
    ):
        self.doc, self.root, self.data, self.kind = doc, root, data, kind
        #: ``(doc.fm_start, doc.fm_end)``, which :func:`upgrade_legacy` has checked are present
        self.block = block
        self.nl = doc.newline
        self.spans = _entry_spans(doc, block, root)
        self.edits: list[TextEdit] = []
        self.changes: list[str] = []
        ident = data.get("id") if isinstance(data.get("id"), str) and data.get("id") else None
        path_id = placement.identity if placement.role is Role.RECORD or placement.role.is_proposal else None
        slug = concept_slug(str(data.get("title") or ""))
        if kind == "memory":
            # Memzoi keys a record by its path; the frontmatter id only fills in where there is no path.
            self.new_id = path_id or slug or "record"
            self.origin = {
                "origin_key": f"repository-record:{path_id or ident or self.new_id}",
                "route": "repository_materialization",
            }
        else:
            self.new_id = path_id or slug or "proposal"
            self.origin = {"origin_key": f"repository-proposal:{ident or self.new_id}", "route": "repository_proposal"}

    def replace(self, key: str, new: str) -> None:
        s, e = self.spans[key]
        self.edits.append(TextEdit(s, e, new))

    def insert(self, at: int, new: str) -> None:
        self.edits.append(TextEdit(at, at, new))

    def run(self) -> Upgrade:
        data, nl = self.data, self.nl
        top: list[str] = []
        if "id" not in data:
            top.append(f"id: {yaml_scalar(self.new_id)}{nl}")
            # the change list is printed: an id that bears a secret is shown as Memzoi's redacted marker
            self.changes.append(f"added id `{shown_id(self.new_id)}`")
        if "kind" not in data:
            top.append(f"kind: {self.kind}{nl}")
            self.changes.append(f"added kind: {self.kind}")
        if "version" in data:
            self.replace("version", "")
            self.changes.append("removed the legacy `version` key")
        after_profile = self._retention() + self._origin()
        if "profile" not in data:
            top.append(f"profile: memzoi{nl}{after_profile}")
            self.changes.append("set profile: memzoi")
        elif data.get("profile") != "memzoi":
            self.replace("profile", f"profile: memzoi{nl}{after_profile}")
            self.changes.append("set profile: memzoi")
        elif after_profile:
            self.insert(self.spans["profile"][1], after_profile)
        if top:
            self.insert(self.block[0], "".join(top))
        if "lane" not in data:
            self.insert(self.spans["type"][1] if "type" in self.spans else self.block[0], f"lane: semantic{nl}")
            self.changes.append("added lane: semantic (the legacy default)")
        if "content_class" not in data:
            self._content_class()
        self._record_values()
        edits = sorted(self.edits, key=lambda e: (e.start, e.end))
        return Upgrade(apply_edits(self.doc.text, self.edits), edits, self.changes)

    def _retention(self) -> str:
        """The retention block to insert after ``profile`` (empty when the file has one, which is edited in place)."""
        data, nl = self.data, self.nl
        expiry: dict[str, str] = {}
        for key in ("expires", "expires_at"):
            if key in data:
                if data[key] is not None:
                    expiry["explicit_expires_at"] = str(data[key])
                self.replace(key, "")
                self.changes.append(f"moved `{key}` to retention.explicit_expires_at")
        if "retention" not in data:
            facts = {**creation_retention(data.get("lane", "semantic"), data.get("timestamp")), **expiry}
            self.changes.append("added retention")
            return _block("retention", facts, nl)
        current = data["retention"] if isinstance(data["retention"], dict) else {}
        if expiry:
            facts = {k: v for k, v in current.items() if k != "policy_version"} | expiry
            self.replace("retention", _block("retention", facts, nl))
            return ""
        if "policy_version" in current:
            if set(current) == {"policy_version"}:
                self.replace("retention", f"retention: {{}}{nl}")
            else:
                self._drop_child("retention", "policy_version")
            self.changes.append("removed retention.policy_version")
        return ""

    def _origin(self) -> str:
        """The origin block to insert after ``profile`` (empty when the file has one, which is edited in place)."""
        data, nl = self.data, self.nl
        if "origin" not in data:
            self.changes.append(f"added origin (route {self.origin['route']})")
            return _block("origin", self.origin, nl)
        current = data["origin"] if isinstance(data["origin"], dict) else {}
        if not {"origin_key", "route"} <= set(current):
            fixed = {k: v for k, v in current.items() if k != "version"}
            for key, value in self.origin.items():
                fixed.setdefault(key, value)
            self.replace("origin", _block("origin", fixed, nl))
            self.changes.append("completed the origin block")
        elif "version" in current:
            self._drop_child("origin", "version")
            self.changes.append("removed origin.version")
        return ""

    def _drop_child(self, key: str, child: str) -> None:
        node = self.root.entries[key][1]
        end = self.spans[key][1]
        if isinstance(node, YMap) and not node.flow:
            s, e = _entry_spans(self.doc, self.block, node, end).get(child, (0, 0))
            if e > s:
                self.edits.append(TextEdit(s, e, ""))
                return
        facts = {k: v for k, v in self.data[key].items() if k != child}
        self.replace(key, _block(key, facts, self.nl))

    def _content_class(self) -> None:
        anchors = ("sensitivity",) if self.kind == "proposal" else ("visibility", "scope", "status")
        after = next((k for k in anchors if k in self.spans), None)
        if after is None and self.kind == "proposal" and self.spans:
            after = max(self.spans, key=lambda k: self.spans[k][1])
        at = self.spans[after][1] if after else self.block[0]
        self.insert(at, f"content_class: general_repo_knowledge{self.nl}")
        self.changes.append("added content_class: general_repo_knowledge (review that it is repository knowledge)")

    def _record_values(self) -> None:
        if self.kind != "memory":
            return
        if self.data.get("status") == "current":
            node = self.root.entries["status"][1]
            self.edits.append(TextEdit(node.start, node.end, "active"))
            self.changes.append("status current → active")
        conf = self.data.get("confidence")
        if isinstance(conf, PlainScalar) and conf in CONFIDENCE_LABELS:
            node = self.root.entries["confidence"][1]
            self.edits.append(TextEdit(node.start, node.end, CONFIDENCE_LABELS[conf]))
            self.changes.append(f"confidence {conf} → {CONFIDENCE_LABELS[conf]}")


def apply_edits(text: str, edits: list[TextEdit]) -> str:
    """Apply non-overlapping edits to ``text`` (insertions at one offset keep their list order)."""
    out = text
    for e in sorted(enumerate(edits), key=lambda p: (p[1].start, p[1].end, p[0]), reverse=True):
        edit = e[1]
        out = out[: edit.start] + edit.new_text + out[edit.end :]
    return out


def _block(key: str, values: dict[str, Any], nl: str) -> str:
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


def _entry_spans(
    doc: Document, block: tuple[int, int], node: YMap, block_end: int | None = None
) -> dict[str, tuple[int, int]]:
    """For each key of ``node``: ``(start of its line, start of the next key's line)`` — the lines it occupies.
    The last key ends at ``block_end`` (default: the end of the frontmatter, ``block`` being ``(doc.fm_start,
    doc.fm_end)``)."""
    fm_start, fm_end = block
    lines = doc.lines
    keys = [k for k in node.order if isinstance(k, YScalar)]
    out: dict[str, tuple[int, int]] = {}
    for i, key in enumerate(keys):
        start = lines.offset(lines.position(key.start)[0], 0)
        if i + 1 < len(keys):
            end = lines.offset(lines.position(keys[i + 1].start)[0], 0)
        elif block_end is not None:
            end = block_end
        else:
            line = lines.position(max(fm_end - 1, fm_start))[0]
            end = lines.starts[line + 1] if line + 1 < len(lines.starts) else len(doc.text)
            end = min(end, doc.fm_close[0] if doc.fm_close else end)
        out.setdefault(str(key.value), (start, end))
    return out
