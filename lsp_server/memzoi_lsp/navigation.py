"""Navigation: definition on record/proposal references, document links, completion of enum values and record
ids, document symbols, workspace symbols and code lenses.

References followed by definition: ``supersedes`` (a record id, or a list of them in a packet),
``proposal.target``, ``lineage.predecessor_id`` and ``proposal_id``. Document links: ``source_ref`` when it is
an ``http(s)`` URL, and ``sources[].path`` / ``sources[].url`` of packets.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from lsprotocol import types

from memzoi.read.yaml_tree import YMap, YScalar, YSeq

from . import keys, provenance
from .convert import TextMap
from .documents import Snapshot, path_to_uri, uri_to_path
from .protocol import handler

if TYPE_CHECKING:
    from .session import ReadSession

RECORD_REFS = {("supersedes",), ("proposal", "target"), ("lineage", "predecessor_id")}
PROPOSAL_REFS = {("proposal_id",)}
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def _strip(path: tuple[str | int, ...]) -> tuple[str, ...]:
    return tuple(p for p in path if isinstance(p, str))


def _value_span(node: YScalar) -> tuple[int, int]:
    if node.style in ('"', "'") and node.end - node.start >= 2:
        return node.start + 1, node.end - 1
    return node.start, node.end


def reference_at(snap: Snapshot, offset: int) -> tuple[str, str, YScalar] | None:
    """``(kind, id, node)`` of the record (``kind="record"``) or proposal reference under ``offset``."""
    hit = keys.value_at(snap.analysis.document, offset)
    if hit is None:
        return None
    path, node = hit
    if not isinstance(node.value, str) or not node.value.strip():
        return None
    plain = _strip(path)
    if plain in RECORD_REFS:
        return "record", node.value.strip(), node
    if plain in PROPOSAL_REFS:
        return "proposal", node.value.strip(), node
    return None


def known_records(ls: ReadSession, snap: Snapshot) -> dict[str, str]:
    """``{record id: uri}`` of the records found on disk in the snapshot's project."""
    project = ls.project_for(snap.path)
    if project is None:
        return {}
    out: dict[str, str] = {}
    records = project.memzoi_dir / "records"
    for uri in sorted(project.files):
        p = Path(uri_path(uri))
        try:
            rel = p.relative_to(records)
        except ValueError:
            continue
        out[rel.with_suffix("").as_posix()] = uri
    return out


def uri_path(uri: str) -> str:
    p = uri_to_path(uri)
    return str(p) if p else ""


def document_symbols(snap: Snapshot, tm: TextMap) -> list[types.DocumentSymbol]:
    """Frontmatter keys (nested) and the body's Markdown headings. YAML comments inside the frontmatter are
    never headings (B15): only the body is scanned for them, skipping fenced code."""
    doc = snap.analysis.document
    out: list[types.DocumentSymbol] = []

    def key_symbols(node: Any) -> list[types.DocumentSymbol]:
        syms: list[types.DocumentSymbol] = []
        if not isinstance(node, YMap):
            return syms
        for name, (key, value) in node.entries.items():
            end = max(key.end, value.end if value is not None else key.end)
            children = key_symbols(value) if isinstance(value, YMap) else []
            if isinstance(value, YSeq):
                for i, item in enumerate(value.items):
                    if isinstance(item, YMap):
                        children.append(
                            types.DocumentSymbol(
                                name=f"[{i}]",
                                kind=types.SymbolKind.Object,
                                range=tm.range(item.start, item.end),
                                selection_range=tm.range(item.start, item.start),
                                children=key_symbols(item),
                            )
                        )
            detail = None
            if isinstance(value, YScalar) and value.value is not None:
                detail = str(value.value)[:80]
            syms.append(
                types.DocumentSymbol(
                    name=str(name) or "(empty key)",
                    detail=detail,
                    kind=types.SymbolKind.Property,
                    range=tm.range(key.start, end),
                    selection_range=tm.range(key.start, key.end),
                    children=children or None,
                )
            )
        return syms

    if doc.fm_start is not None and doc.mapping is not None:
        close = doc.fm_close[1] if doc.fm_close else len(snap.text)
        open_start = 1 if doc.bom else 0
        out.append(
            types.DocumentSymbol(
                name="frontmatter",
                kind=types.SymbolKind.Namespace,
                range=tm.range(open_start, close),
                selection_range=tm.range(open_start, min(open_start + 3, close)),
                children=key_symbols(doc.mapping),
            )
        )
    body = doc.body_start if doc.body_start is not None else len(snap.text)
    fenced = False
    text = snap.text
    for m in re.finditer(r"[^\r\n]*(?:\r\n|\r|\n|$)", text[body:]):
        line = m.group(0).rstrip("\r\n")
        start = body + m.start()
        if not m.group(0):
            break
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        h = _HEADING.match(line)
        if h and h.group(2):
            level = len(h.group(1))
            name = h.group(2)
            out.append(
                types.DocumentSymbol(
                    name=name,
                    detail="#" * level,
                    kind=types.SymbolKind.String if level == 1 else types.SymbolKind.Namespace,
                    range=tm.range(start, start + len(line)),
                    selection_range=tm.range(start + h.start(2), start + h.end(2)),
                )
            )
    return out


def _url_link(node: Any) -> tuple[int, int, str] | None:
    if (
        isinstance(node, YScalar)
        and isinstance(node.value, str)
        and urlsplit(node.value.strip()).scheme in ("http", "https")
    ):
        s, e = _value_span(node)
        return s, e, node.value.strip()
    return None


def _path_link(node: Any, root: Path) -> tuple[int, int, str] | None:
    if not (isinstance(node, YScalar) and isinstance(node.value, str) and node.value.strip()):
        return None
    target = (root / node.value.strip()).resolve()
    if not target.is_relative_to(root) or not target.exists():  # never link outside the repository
        return None
    s, e = _value_span(node)
    return s, e, path_to_uri(target)


def source_links(root: YMap, project_root: Path | None) -> list[tuple[int, int, str]]:
    """``[(start, end, target)]`` links of a frontmatter mapping: the http(s) URLs of ``source_ref`` and of each
    ``sources[].url``, and each ``sources[].path`` that names an existing file inside ``project_root`` (as a
    ``file:`` URI). Spans are code-point offsets of the value."""
    out = [_url_link(root.entries["source_ref"][1])] if "source_ref" in root.entries else []
    sources = root.entries["sources"][1] if "sources" in root.entries else None
    for item in sources.items if isinstance(sources, YSeq) else []:
        if not isinstance(item, YMap):
            continue
        if "url" in item.entries:
            out.append(_url_link(item.entries["url"][1]))
        if "path" in item.entries and project_root is not None:
            out.append(_path_link(item.entries["path"][1], project_root))
    return [link for link in out if link is not None]


class Navigation:
    """The navigation feature (definition, document links, completion, document and workspace symbols): reads
    only, over the :class:`~memzoi_lsp.session.ReadSession` it is made with; it owns no state."""

    def __init__(self, ls: ReadSession) -> None:
        self._ls = ls

    def register(self, server: ReadSession) -> None:
        """Register definition, document links, completion, document and workspace symbols."""
        server.feature(types.TEXT_DOCUMENT_DEFINITION)(handler(self.definition))
        server.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK)(handler(self.document_link))
        server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)(handler(self.document_symbol))
        server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=[":", " ", "/"]))(
            handler(self.completion)
        )
        server.feature(types.WORKSPACE_SYMBOL)(handler(self.workspace_symbol))

    def _snapshot(self, uri: str) -> Snapshot | None:
        """The document's snapshot when the server diagnoses it (else ``None``)."""
        snap = self._ls.docs.snapshot(uri)
        return snap if snap is not None and self._ls.is_memzoi(snap) else None

    def definition(self, params: types.DefinitionParams) -> list[types.Location] | None:
        """The record or packet a reference under the cursor names (its file's start)."""
        ls = self._ls
        snap = self._snapshot(params.text_document.uri)
        if snap is None:
            return None
        tm = TextMap(snap.text, ls.workspace.position_encoding)
        ref = reference_at(snap, tm.offset(params.position))
        if ref is None:
            return None
        kind, ident, _node = ref
        path = (provenance.record_path if kind == "record" else provenance.proposal_path)(ls, snap, ident)
        if path is None:
            return None
        zero = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))
        return [types.Location(uri=path_to_uri(path), range=zero)]

    def document_link(self, params: types.DocumentLinkParams) -> list[types.DocumentLink] | None:
        """Links of the document's sources (URLs, and paths inside the project)."""
        ls = self._ls
        snap = self._snapshot(params.text_document.uri)
        if snap is None or snap.analysis.document.mapping is None:
            return None
        project = ls.project_for(snap.path)
        tm = TextMap(snap.text, ls.workspace.position_encoding)
        links = [
            types.DocumentLink(range=tm.range(s, e), target=target)
            for s, e, target in source_links(snap.analysis.document.mapping, project.root if project else None)
        ]
        return links or None

    def document_symbol(self, params: types.DocumentSymbolParams) -> list[types.DocumentSymbol] | None:
        """The document's frontmatter keys and body headings (:func:`document_symbols`)."""
        snap = self._snapshot(params.text_document.uri)
        if snap is None:
            return None
        return document_symbols(snap, TextMap(snap.text, self._ls.workspace.position_encoding))

    def completion(self, params: types.CompletionParams) -> types.CompletionList | None:
        """Record ids where a record is referenced, else the allowed values of the field under the cursor."""
        ls = self._ls
        snap = self._snapshot(params.text_document.uri)
        if snap is None:
            return None
        offset = TextMap(snap.text, ls.workspace.position_encoding).offset(params.position)
        from memzoi.read.yaml_cursor import value_path_at  # noqa: PLC0415 lazy: start-up

        path = value_path_at(snap.analysis.document, offset)
        if path is None:
            return None
        if _strip(path) in RECORD_REFS or path[:1] == ("supersedes",):
            items = [
                types.CompletionItem(label=rid, kind=types.CompletionItemKind.Reference)
                for rid in known_records(ls, snap)
                if rid != snap.analysis.placement.identity
            ]
        else:
            items = _value_items(snap, path)
        return types.CompletionList(is_incomplete=False, items=items) if items else None

    async def workspace_symbol(self, params: types.WorkspaceSymbolParams) -> list[types.WorkspaceSymbol]:
        """Records and packets matching the query (:func:`search_symbols`)."""
        return await search_symbols(self._ls, params.query)


def _value_items(snap: Snapshot, path: tuple[str | int, ...]) -> list[types.CompletionItem]:
    """The allowed values of the field at ``path`` (an enumeration's members), as completion items."""
    from memzoi.judge.schemainfo import allowed_values  # noqa: PLC0415 lazy: start-up

    found = keys.field_info(snap.analysis.document, snap.analysis.placement, path)
    if found is None:
        return []
    _model, _name, info = found
    return [
        types.CompletionItem(label=value, kind=types.CompletionItemKind.EnumMember, documentation=info.description)
        for value in allowed_values(info.annotation)
    ]


async def search_symbols(ls: ReadSession, query: str, limit: int = 100) -> list[types.WorkspaceSymbol]:
    """Workspace symbols: full-text search of titles and bodies through each project's index (BM25 order);
    projects whose index is not ready yet (first scan running) and empty queries use :func:`.indexing.workspace_symbols`."""
    from . import indexing  # noqa: PLC0415 lazy: start-up

    out: list[types.WorkspaceSymbol] = []
    fallback = False
    zero = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))
    for project in list(ls.projects.values()):
        hits = await indexing.search(ls, project, query, limit) if query.strip() else None
        if hits is None:
            fallback = True
            continue
        for h in hits:
            out.append(
                types.WorkspaceSymbol(
                    name=h.title or (h.id or h.path),
                    kind=types.SymbolKind.File if h.kind == "record" else types.SymbolKind.Event,
                    location=types.Location(uri=path_to_uri(project.root / h.path), range=zero),
                    container_name=h.id or "",
                )
            )
    if fallback:
        seen = {s.location.uri for s in out}
        out.extend(s for s in indexing.workspace_symbols(ls, query, limit) if s.location.uri not in seen)
    return out[:limit]
