"""The git-plane gate: may this record or pending proposal live in the repository?

Source: Memzoi ``repository_write_safety/policy.rs::evaluate`` and read-side admission
(``scan_managed_repository_blob``, ``service/derived_index/admission.rs``), reference ``memzoi-format.md``
§3.1–§3.2 and §4.3. Checks, each anchored on the key whose value decides it:

* ``sensitivity_not_repo_safe``: a pending proposal's ``sensitivity`` is not ``repo-safe`` (records are
  implicitly repo-safe: they are already in the repository).
* ``scope_not_repository`` / ``scope_project_mismatch``: scope must be ``repo``, or ``project`` with a scope id
  (record ``scope_id``, proposal ``scope.id``) equal to ``[project] id`` of ``.memzoi/config.toml``. A
  ``project`` scope without an id, with another id, or with no project id configured is a mismatch.
* ``visibility_not_repository_safe`` (records): Memzoi's write gate accepts ``repo`` or ``public``, but
  admission of a canonical record requires exactly ``repo``; records are read through admission, so anything
  but ``repo`` is reported (the message says so for ``public``). Proposal packets have no visibility field.
* content class: only ``general_repo_knowledge``; every other class maps to Memzoi's code (``raw_transcript``,
  ``private_personal_data``, ``activity_history``, ``private_endpoint``, ``undisclosed_vulnerability``,
  ``private_evidence_unminimized``, ``temporary_task_state``, ``local_only_state``, ``unknown_content_class``).
* ``candidate_too_large``: any single field (frontmatter string or body) over 512 KiB of UTF-8, all of them
  together over 2 MiB, or the file itself over 512 KiB (Memzoi's limit for one projection: the rendered file it
  writes or admits, reference §3.2).

Values the schema already rejects (unknown enum values, missing keys) are left to the schema findings. On a
pending proposal each message says the proposal cannot be applied, and ``data["route_local"]`` marks findings
where routing the memory to local (private) memory is the fitting alternative. Severity on a pending packet is
decided in one place, :func:`memzoi.judge.gate_codes.pending_severity`: a non-repo-safe ``sensitivity`` is an error, because the packet is
itself committed, so what it declares secret or private is already in git (Memzoi's ``safety scan`` blocks such a
packet: ``scan_managed_repository_blob`` takes the packet's own sensitivity); the findings that only say the packet
cannot be applied yet (scope, project, content class, size) are warnings. Content-detector findings are errors on
packets as on records (:mod:`memzoi.safety`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ..base.findings import Finding, Severity, finding
from ..read.document import Document
from ..read.yaml12 import YMap, YNode, YScalar, YSeq, locate
from ..safety import scan_complete, scan_document
from .config_model import DEFAULT_CONFIG, MemzoiConfig
from .gate_codes import CONTENT_CLASS_CODES, SENSITIVITY_GUIDANCE, pending_severity
from .workspace import Placement, Role

FIELD_LIMIT = 512 * 1024
AGGREGATE_LIMIT = 2 * 1024 * 1024

_LOCAL_SCOPES = frozenset({"personal", "agent"})
_SCOPES = frozenset({"personal", "repo", "project", "team", "org", "agent", "imported_untrusted"})
_VISIBILITIES = frozenset({"public", "private", "repo", "team", "org"})


def gate_kind(doc: Document, placement: Placement) -> str | None:
    """``record``, ``pending`` or ``None`` (not gated: resolved packets, reserved and unknown files)."""
    data = doc.data
    if data is None:
        return None
    if placement.role is Role.RECORD:
        return "record"
    if placement.role is Role.PENDING:
        return "pending"
    if placement.role is Role.OTHER:
        kind = data.get("kind")
        if kind == "memory":
            return "record"
        if kind == "proposal" and data.get("status") in (None, "proposed"):
            return "pending"
    return None


class _Gate:
    def __init__(self, doc: Document, kind: str, config: MemzoiConfig, legacy: bool = False) -> None:
        self.doc, self.kind, self.config, self.legacy = doc, kind, config, legacy
        self.data: dict[str, Any] = doc.data or {}
        self.out: list[Finding] = []

    def span(self, *loc: Any) -> tuple[int, int]:
        key, value = locate(self.doc.yaml_root, loc)
        node = value if value is not None else key
        if node is not None:
            return node.start, node.end
        start = 1 if self.doc.bom else 0
        return start, min(start + 3, len(self.doc.text))

    def add(self, code: str, why: str, loc: tuple[Any, ...], *, route_local: bool = False, **data: Any) -> None:
        if self.kind == "pending":
            msg = f"this proposal cannot be applied to the repository: {why}"
            if pending_severity(code) == Severity.ERROR:
                msg += (
                    "; the packet itself is committed, so its content is already in git: reject it"
                    + (" or route it to local memory" if route_local else "")
                    + " and keep it out of the repository history"
                )
            else:
                msg += (
                    "; reject it, or route it to local memory instead"
                    if route_local
                    else "; reject it or fix the packet"
                )
        else:
            msg = f"this record is refused from the git plane: {why}"
        start, end = self.span(*loc)
        f = finding(
            code,
            msg,
            start,
            end,
            route_local=route_local and self.kind == "pending",
            key=".".join(map(str, loc)),
            **data,
        )
        self._emit(f)

    def _emit(self, f: Finding) -> None:
        if self.kind == "pending":
            f = replace(f, severity=pending_severity(f.code))
        self.out.append(f)

    def sensitivity(self) -> None:
        value = self.data.get("sensitivity")
        if self.kind != "pending" or not isinstance(value, str) or value == "repo-safe":
            return
        if value not in SENSITIVITY_GUIDANCE:
            return  # the schema reports an invalid value
        guidance, local = SENSITIVITY_GUIDANCE[value]
        self.add(
            "sensitivity_not_repo_safe",
            f"sensitivity `{value}` is not `repo-safe` ({guidance})",
            ("sensitivity",),
            route_local=local,
            sensitivity=value,
        )

    def scope(self) -> None:
        kind_loc: tuple[str, ...]
        id_loc: tuple[str, ...]
        if self.kind == "record":
            kind, sid, kind_loc, id_loc = self.data.get("scope"), self.data.get("scope_id"), ("scope",), ("scope_id",)
        else:
            block = self.data.get("scope")
            if isinstance(block, str):  # a record-style scalar scope in a packet: the schema reports its shape
                kind, sid = block, None
                kind_loc = id_loc = ("scope",)
            elif isinstance(block, dict):
                kind, sid, kind_loc, id_loc = block.get("kind"), block.get("id"), ("scope", "kind"), ("scope", "id")
            else:
                return
        if not isinstance(kind, str) or kind not in _SCOPES or kind == "repo":
            return
        if kind != "project":
            self.add(
                "scope_not_repository",
                f"scope `{kind}` is not repository scope; only `repo` (or `project` with the configured project "
                "id) can reach the git plane",
                kind_loc,
                route_local=kind in _LOCAL_SCOPES,
                scope=kind,
            )
            return
        configured = self.config.project_id
        id_name = "scope_id" if self.kind == "record" else "scope.id"
        # A record's scope is a scalar; a packet's is a mapping (`scope: repo` would be invalid there).
        as_repo = "`scope: repo`" if self.kind == "record" else "`scope: {kind: repo}`"
        sid = sid.strip() if isinstance(sid, str) else None
        if configured is None:
            why = (
                "scope `project` is repository scope only when its id equals the project id in "
                f"`.memzoi/config.toml`, and no `[project] id` is configured; use {as_repo}, or set `[project] id` "
                "there"
            )
            loc = id_loc if sid else kind_loc
        elif not sid:
            why = (
                f"scope `project` has no `{id_name}`; add `{id_name}` with the configured project id, or use {as_repo}"
            )
            loc = kind_loc
        elif sid != configured:
            why = (
                f"`{id_name}` does not match the project id configured in `.memzoi/config.toml`; this memory "
                "belongs to another project"
            )
            loc = id_loc
        else:
            return
        self.add("scope_project_mismatch", why, loc, route_local=False, scope="project")

    def visibility(self) -> None:
        if self.kind != "record":
            return
        value = self.data.get("visibility")
        if not isinstance(value, str) or value not in _VISIBILITIES or value == "repo":
            return
        if value == "public":
            why = (
                "visibility `public` passes Memzoi's write gate, but admission of a canonical record requires "
                "exactly `visibility: repo`; set `visibility: repo`"
            )
        else:
            why = (
                f"visibility `{value}` is narrower than the repository's readers; use `visibility: repo` if every "
                "reader of the repository may see it, otherwise keep it in local memory"
            )
        self.add("visibility_not_repository_safe", why, ("visibility",), visibility=value)

    def content_class(self) -> None:
        if "content_class" not in self.data:
            # The schema reports `missing_key`; Memzoi's gate reads a missing class as `unknown` (an unparsed
            # record's policy has an unknown class, reference §3.2): say both. A legacy file's upgrade supplies it.
            if not self.legacy:
                self.add(
                    "unknown_content_class",
                    "no `content_class`, so Memzoi's gate reads the class as `unknown` "
                    "(unknown_content_class); add `content_class: general_repo_knowledge` if it is durable "
                    "repository knowledge",
                    ("content_class",),
                    content_class="unknown",
                )
            return
        value = self.data.get("content_class")
        if not isinstance(value, str):
            return
        value = value.replace("-", "_")
        if value == "general_repo_knowledge" or value not in CONTENT_CLASS_CODES:
            return
        code, why, local = CONTENT_CLASS_CODES[value]
        self.add(code, f"content class `{value}`: {why}", ("content_class",), route_local=local, content_class=value)

    def size(self) -> None:
        text = self.doc.text
        if len(text) * 4 <= FIELD_LIMIT:
            return  # cannot exceed any limit: UTF-8 needs at most 4 bytes per code point
        total = 0
        for loc, node in _strings(self.doc.yaml_root, ()):
            n = len(str(node.value).encode("utf-8", "surrogatepass"))
            total += n
            if n > FIELD_LIMIT:
                self.add(
                    "candidate_too_large",
                    f"field `{'.'.join(map(str, loc))}` is {n} bytes, over Memzoi's "
                    f"{FIELD_LIMIT}-byte limit per field; shorten it",
                    loc,
                )
        s, e = self.doc.body_span
        body = len(text[s:e].encode("utf-8", "surrogatepass"))
        total += body
        if body > FIELD_LIMIT:
            nl = text.find("\n", s, e)
            self._raw(
                "candidate_too_large",
                f"the body is {body} bytes, over Memzoi's {FIELD_LIMIT}-byte limit per "
                "field; keep only the durable facts",
                s,
                e if nl < 0 else nl,
            )
        start = 1 if self.doc.bom else 0
        if total > AGGREGATE_LIMIT:
            self._raw(
                "candidate_too_large",
                f"fields total {total} bytes, over Memzoi's {AGGREGATE_LIMIT}-byte aggregate limit; split the memory",
                start,
                min(start + 3, len(text)),
            )
        elif not any(f.code == "candidate_too_large" for f in self.out):
            # Fields under the limit can still make a file over it (a one-line body is repeated as `description`).
            size = len(text.encode("utf-8", "surrogatepass"))
            if size > FIELD_LIMIT:
                self._raw(
                    "candidate_too_large",
                    f"the file is {size} bytes, over Memzoi's {FIELD_LIMIT}-byte limit "
                    "for one projected file; keep only the durable facts",
                    start,
                    min(start + 3, len(text)),
                )

    def _raw(self, code: str, why: str, start: int, end: int) -> None:
        prefix = (
            "this proposal cannot be applied to the repository"
            if self.kind == "pending"
            else ("this record is refused from the git plane")
        )
        self._emit(finding(code, f"{prefix}: {why}", start, end, route_local=False))


def _strings(node: YNode | None, loc: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], YScalar]]:
    if isinstance(node, YScalar):
        if isinstance(node.value, str):
            yield loc, node
    elif isinstance(node, YMap):
        for key, (_, v) in node.entries.items():
            yield from _strings(v, loc + (key,))
    elif isinstance(node, YSeq):
        for i, item in enumerate(node.items):
            yield from _strings(item, loc + (i,))


def gate_findings(doc: Document, placement: Placement, config: MemzoiConfig, *, legacy: bool = False) -> list[Finding]:
    """Git-plane gate findings of a record or pending proposal (empty for anything else). Never raises.
    ``legacy``: the file is in a legacy profile, whose upgrade supplies a missing ``content_class``.

    A file in ``records/`` or ``proposals/pending/`` whose frontmatter cannot be read (missing, unparsable) gets
    only ``candidate_too_large`` when the file is over :data:`FIELD_LIMIT`, beside its framing finding: Memzoi
    refuses a projection that large whatever it holds (reference §3.2)."""
    kind = gate_kind(doc, placement)
    if kind is None:
        if doc.data is None and placement.role in (Role.RECORD, Role.PENDING) and len(doc.text) * 4 > FIELD_LIMIT:
            size = len(doc.text.encode("utf-8", "surrogatepass"))
            if size > FIELD_LIMIT:
                gate = _Gate(doc, "record" if placement.role is Role.RECORD else "pending", config)
                start = 1 if doc.bom else 0
                gate._raw(
                    "candidate_too_large",
                    f"the file is {size} bytes, over Memzoi's {FIELD_LIMIT}-byte limit "
                    "for one projected file; keep only the durable facts",
                    start,
                    min(start + 3, len(doc.text)),
                )
                return gate.out
        return []
    gate = _Gate(doc, kind, config, legacy)
    gate.sensitivity()
    gate.scope()
    gate.visibility()
    gate.content_class()
    gate.size()
    return gate.out


def safety_findings(
    doc: Document,
    placement: Placement,
    config: MemzoiConfig | None = None,
    *,
    legacy: bool = False,
    memory: bool = True,
) -> list[Finding]:
    """Gate findings plus content-detector findings (:mod:`memzoi.safety`) for one framed document. Never raises.

    Every file is scanned, reserved and stray files included (they are committed too); the gate only applies
    to records and pending packets. Memzoi's write-safety rules run on every file whatever its size; the rest of
    the detectors only where :func:`memzoi.safety.scan_complete` holds (the gate reports ``candidate_too_large`` above it).
    ``legacy``: the file is in a legacy profile (:func:`gate_findings`). ``memory`` false: the file
    is not a memory (``config.toml``, another non-Markdown file), and messages are worded for a plain file.
    """
    config = config or DEFAULT_CONFIG
    out = gate_findings(doc, placement, config, legacy=legacy)
    out.extend(
        scan_document(
            doc, config.accepted, config.safety.unsigned_jwt, floor_only=not scan_complete(doc.text), memory=memory
        )
    )
    return out
