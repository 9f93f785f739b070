"""Typed, tolerant views of a record's or packet's frontmatter: each field name of Memzoi's formats (reference
``memzoi-format.md`` §1–§2) is spelled here once for the code that reads facts from a file it did not write.

The views read the parsed mapping as it is, valid or not: the editor, the cross-file checks and the listings must
say something useful about a file whose frontmatter the schema refuses, so a field that is missing or of the wrong
type reads as ``None`` (or an empty mapping or list), never as an exception. What is *valid* is decided by the
models (:mod:`memzoi.models`) and :mod:`memzoi.judge.validate`; the rules that mirror Memzoi field by field (revision
projections, the git-plane gate, legacy upgrades, rendering) keep their explicit field lists on purpose.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_EMPTY: Mapping[str, Any] = {}


def text(value: Any) -> str | None:
    """``value`` stripped when it is a non-blank string, else ``None``."""
    return value.strip() if isinstance(value, str) and value.strip() else None


def block(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a mapping, else an empty one."""
    return value if isinstance(value, Mapping) else _EMPTY


class _Fields:
    __slots__ = ("data",)

    def __init__(self, data: Any) -> None:
        self.data: Mapping[str, Any] = block(data)

    def _text(self, key: str) -> str | None:
        return text(self.data.get(key))


class ProposalBlock(_Fields):
    """A packet's ``proposal:`` block (reference §2.2): what the proposal does and who proposed it."""

    __slots__ = ()

    @property
    def action(self) -> str | None:
        """``create``, ``supersede`` or ``tombstone`` as written."""
        return self._text("action")

    @property
    def target(self) -> str | None:
        """The record a supersede or tombstone acts on."""
        return self._text("target")

    @property
    def reason(self) -> str | None:
        return self._text("reason")

    @property
    def proposed_by(self) -> str | None:
        return self._text("proposed_by")

    @property
    def proposed_at(self) -> str | None:
        return self._text("proposed_at")


class Frontmatter(_Fields):
    """The fields records and packets share, and each one's own (see the module docstring)."""

    __slots__ = ()

    @property
    def id(self) -> str | None:
        return self._text("id")

    @property
    def title(self) -> str | None:
        return self._text("title")

    @property
    def status(self) -> str | None:
        return self._text("status")

    @property
    def type(self) -> str | None:
        return self._text("type")

    @property
    def lane(self) -> str | None:
        return self._text("lane")

    @property
    def sensitivity(self) -> str | None:
        return self._text("sensitivity")

    @property
    def content_class(self) -> str | None:
        return self._text("content_class")

    @property
    def retention(self) -> Mapping[str, Any]:
        """The retention facts (reference §5), ``{}`` when absent or not a mapping."""
        return block(self.data.get("retention"))

    # -- records (reference §1) --------------------------------------------------------------------------------

    @property
    def record_scope(self) -> str | None:
        """A record's scope kind (a string field on records)."""
        return self._text("scope")

    @property
    def scope_id(self) -> str | None:
        return self._text("scope_id")

    @property
    def supersedes(self) -> str | None:
        """The record a record supersedes (one id on records)."""
        return self._text("supersedes")

    @property
    def proposal_id(self) -> str | None:
        """Review lineage: the proposal a record came from."""
        return self._text("proposal_id")

    @property
    def source(self) -> str | None:
        return self._text("source")

    @property
    def source_ref(self) -> str | None:
        return self._text("source_ref")

    @property
    def updated(self) -> str | None:
        """When the record last changed: ``updated``, else the older profiles' ``timestamp``."""
        return self._text("updated") or self._text("timestamp")

    @property
    def origin(self) -> Mapping[str, Any]:
        return block(self.data.get("origin"))

    @property
    def lineage(self) -> Mapping[str, Any]:
        return block(self.data.get("lineage"))

    @property
    def predecessor_id(self) -> str | None:
        """``lineage.predecessor_id``: the record this one renews or succeeds."""
        return text(self.lineage.get("predecessor_id"))

    # -- packets (reference §2) --------------------------------------------------------------------------------

    @property
    def proposal(self) -> ProposalBlock:
        return ProposalBlock(self.data.get("proposal"))

    @property
    def packet_scope(self) -> Mapping[str, Any]:
        """A packet's ``scope: {kind, id}`` mapping."""
        return block(self.data.get("scope"))

    @property
    def supersedes_list(self) -> list[tuple[int | None, str]]:
        """A packet's ``supersedes`` entries as ``(index, id)``: ``index`` is ``None`` for a single string (an older
        spelling), blank or non-string entries are left out."""
        value = self.data.get("supersedes")
        if isinstance(value, list):
            return [(i, t) for i, item in enumerate(value) if (t := text(item))]
        single = text(value)
        return [(None, single)] if single else []

    @property
    def resolution(self) -> Mapping[str, Any]:
        """A resolved packet's ``resolution:`` block, ``{}`` on a pending one."""
        return block(self.data.get("resolution"))
