"""What cross-file checks know about one file: :class:`FileFacts`, built by :func:`facts_from_analysis`.

Facts are small plain values (JSON-serializable, so the index stores them and worker processes return them):
the file's kind, role, id, status, scope, time, body key for duplicates, proposal identities and the
references it makes, with code-point spans into the analysed text. :mod:`memzoi.project.crossfile` evaluates them
across a workspace.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from ..base.utf8 import utf8_bytes
from ..base.views import Frontmatter, text

if TYPE_CHECKING:  # facts read back from a cache or an index load no analysis
    from ..judge.analysis import Analysis
    from ..read.yaml_tree import YNode, YScalar

#: Runtime (database) proposal ids, ``prop_<UUIDv7>``; they never name a proposal packet file, so a record's
#: ``proposal_id`` of this form is not checked against the workspace (reference §2.7).
_DB_PROPOSAL = re.compile(r"^prop_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


@dataclass(frozen=True, slots=True)
class Ref:
    """A reference from a file to another artifact: ``field`` names the key (``supersedes``,
    ``lineage.predecessor_id``, ``proposal.target``, ``supersedes[0]``, ``proposal_id``), ``target`` the id,
    ``span`` the value's code-point span, ``to`` what it points at (``record`` or ``proposal``; ``created``: the
    record a pending packet's apply would create, from its ``title``, :func:`memzoi.judge.recordslot.created_record_id`)."""

    field: str
    target: str
    span: tuple[int, int]
    to: str = "record"


@dataclass(frozen=True, slots=True)
class FileFacts:
    """What cross-file checks need to know about one file (all plain values, JSON-serializable).

    ``kind`` is ``record``, ``proposal`` or ``other``; ``role`` the :class:`~memzoi.judge.workspace.Role` value;
    ``ident`` the record id (records) or the frontmatter id (packets); ``tokens`` a packet's identities (its id
    and file id, as :func:`identity_token` forms so a redacted receipt matches the identity it replaced) —
    and file id); ``when`` a record's ``updated`` or else ``timestamp`` / a packet's ``proposal.proposed_at``;
    ``content`` the body's :func:`~memzoi.judge.revision.duplicate_key` (``None`` for an empty body); ``refs`` the references
    it makes. ``legacy`` records still define their id but take no part in duplicate checks.

    Slotted: ``memzoi check`` and the language server hold one per file of a project (a per-instance dict was about
    a quarter of a file's facts at 50,000 files).
    """

    kind: str
    role: str
    ident: str | None = None
    status: str | None = None
    scope_kind: str | None = None
    scope_id: str | None = None
    when: str | None = None
    action: str | None = None
    content: str | None = None
    tokens: tuple[str, ...] = ()
    refs: tuple[Ref, ...] = ()
    ident_span: tuple[int, int] = (0, 0)
    body_span: tuple[int, int] = (0, 0)
    legacy: bool = False
    #: The facts could not be read (an internal error, logged): the file takes no part in the graph and gets an
    #: ``internal_error`` finding from the cross-file evaluation instead.
    failed: bool = False

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # `memzoi check` workers send one per file: positional fields unpickle several times faster than the
        # default per-instance dict, and one C-level attrgetter reads them 3x faster than a generator of getattr.
        return (from_fields, _FACT_FIELDS(self))

    def to_json(self) -> dict[str, Any]:
        """Plain dict form (stored in the index)."""
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}  # asdict() deep-copies: 10x slower
        d["refs"] = [{"field": r.field, "target": r.target, "span": list(r.span), "to": r.to} for r in self.refs]
        if not self.failed:
            del d["failed"]
        return d

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FileFacts:
        """Inverse of :meth:`to_json`."""
        d = dict(data)
        d["refs"] = tuple(
            Ref(r["field"], r["target"], tuple(r["span"]), r.get("to", "record")) for r in d.get("refs", ())
        )
        d["tokens"] = tuple(d.get("tokens", ()))
        d["ident_span"] = tuple(d.get("ident_span", (0, 0)))
        d["body_span"] = tuple(d.get("body_span", (0, 0)))
        return cls(**d)

    @property
    def pending(self) -> bool:
        """A proposal that is still pending (``status: proposed``)."""
        return self.kind == "proposal" and self.status == "proposed"


#: every field of a :class:`FileFacts` in declaration order (its pickled form)
_FACT_FIELDS: Callable[[FileFacts], tuple[Any, ...]] = attrgetter(*FileFacts.__dataclass_fields__)


def from_fields(
    kind: str,
    role: str,
    ident: str | None,
    status: str | None,
    scope_kind: str | None,
    scope_id: str | None,
    *rest: Any,
) -> FileFacts:
    """:class:`FileFacts` from its fields in declaration order (a worker's pickled facts, a store's payload), with the
    words that repeat from file to file (kind, role, status, the scope's kind and id) kept as one string each rather
    than the copy per file that unpickling or JSON makes (issue 29: the language server holds the facts of every
    file; some 250 bytes a file)."""
    return FileFacts(
        sys.intern(kind), sys.intern(role), ident, _shared(status), _shared(scope_kind), _shared(scope_id), *rest
    )


def _shared(word: str | None) -> str | None:
    return None if word is None else sys.intern(word)


def facts_from_analysis(analysis: Analysis) -> FileFacts:
    """Extract :class:`FileFacts` from an :class:`~memzoi.judge.analysis.Analysis`. Works on invalid frontmatter too
    (whatever fields are readable are used), so a broken target still counts as existing. Never raises: an
    internal error is logged (:func:`memzoi.judge.barrier.log_internal_error`) and gives ``failed`` facts, which
    :mod:`memzoi.project.crossfile` reports as an ``internal_error`` on the file while the other files are judged."""
    try:
        return _facts(analysis)
    except Exception as err:  # the per-file barrier of the cross-file step
        from ..judge.barrier import log_internal_error  # noqa: PLC0415 lazy: start-up

        log_internal_error(err)
        return FileFacts(kind=analysis.kind, role=analysis.placement.role.value, failed=True)


@cache
def _readers() -> tuple[
    Callable[[Analysis], str | None],
    Callable[[str | None, str | None], str | None],
    Callable[[str, int, int], str],
    Callable[[YNode | None, tuple[Any, ...]], tuple[YScalar | None, YNode | None]],
]:
    """``(record_id_of, created_record_id, duplicate_key, locate)``, imported at the first file whose facts are
    read from its analysis (facts read back from a store load none of them) and kept: an import statement costs
    1.5–2 µs at every call even when its module is loaded, and a cold check made ten of them per file."""
    from ..judge.analysis import record_id_of  # noqa: PLC0415 lazy: start-up
    from ..judge.recordslot import created_record_id  # noqa: PLC0415 lazy: start-up
    from ..judge.revision import duplicate_key  # noqa: PLC0415 lazy: start-up
    from ..read.yaml_tree import locate  # noqa: PLC0415 lazy: start-up

    return record_id_of, created_record_id, duplicate_key, locate


def _facts(analysis: Analysis) -> FileFacts:
    record_id_of, created_record_id, duplicate_key, locate = _readers()
    doc = analysis.document
    fm = Frontmatter(doc.data)
    kind = analysis.kind
    role = analysis.placement.role.value
    root = doc.yaml_root

    def span(*loc: Any) -> tuple[int, int]:
        k, v = locate(root, loc)
        node = v if v is not None else k
        return (node.start, node.end) if node is not None else (0, min(3, len(doc.text)))

    start, end = doc.body_span  # keyed in place: a copy of a huge body is not needed (duplicate_key's pieces)
    content = duplicate_key(doc.text, start, end) if end > start else None
    if kind == "record":
        refs: list[Ref] = []
        if fm.supersedes:
            refs.append(Ref("supersedes", fm.supersedes, span("supersedes")))
        if fm.predecessor_id:
            refs.append(Ref("lineage.predecessor_id", fm.predecessor_id, span("lineage", "predecessor_id")))
        pid = fm.proposal_id
        if pid and not _DB_PROPOSAL.match(pid):
            refs.append(Ref("proposal_id", pid, span("proposal_id"), to="proposal"))
        return FileFacts(
            kind="record",
            role=role,
            ident=record_id_of(analysis),
            status=fm.status,
            scope_kind=fm.record_scope,
            scope_id=fm.scope_id,
            when=fm.updated,
            content=content,
            refs=tuple(refs),
            ident_span=span("id"),
            body_span=doc.body_span,
            legacy=bool(analysis.legacy),
        )
    if kind == "proposal":
        block, scope = fm.proposal, fm.packet_scope
        refs = [
            Ref(
                "supersedes" if i is None else f"supersedes[{i}]",
                target,
                span("supersedes") if i is None else span("supersedes", i),
            )
            for i, target in fm.supersedes_list
        ]
        if block.target:
            refs.append(Ref("proposal.target", block.target, span("proposal", "target")))
        created = created_record_id(block.action, fm.title)
        if created:  # the record its apply would create: a record appearing there is a dependency too
            refs.append(Ref("title", created, span("title"), to="created"))
        ident = fm.id
        tokens = {identity_token(t) for t in (ident, analysis.placement.identity) if t}
        return FileFacts(
            kind="proposal",
            role=role,
            ident=ident,
            status=fm.status,
            scope_kind=text(scope.get("kind")),
            scope_id=text(scope.get("id")),
            when=block.proposed_at,
            action=block.action,
            content=content,
            tokens=tuple(sorted(tokens)),
            refs=tuple(refs),
            ident_span=span("id"),
            body_span=doc.body_span,
        )
    return FileFacts(kind=kind, role=role)


_TOKEN = re.compile(r"^redacted-identity-[0-9a-f]{64}$")


def identity_token(identity: str) -> str:
    """Memzoi's proposal identity token (reference §2.6): ``redacted-identity-`` + BLAKE3 hex of the identity, or
    the value itself when it already is a token. Two packets share an identity when their tokens meet, so a new
    packet reusing the id of a rejected, redacted packet is a duplicate too."""
    if _TOKEN.match(identity):
        return identity
    import blake3  # noqa: PLC0415 lazy: start-up

    return "redacted-identity-" + blake3.blake3(utf8_bytes(identity)).hexdigest()


__all__ = ["FileFacts", "Ref", "facts_from_analysis", "from_fields", "identity_token"]
