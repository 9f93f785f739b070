"""Hover: the schema documentation of a frontmatter key, and the provenance of a record or proposal packet
(SPEC §5) anywhere else in its frontmatter.

Everything taken from a file is escaped: record text can never become Markdown markup, HTML or a link, and the
only links in a hover are ones this module builds itself (``http``/``https`` evidence URLs and ``file:`` URIs of
files in the project), never ``command:`` links.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from lsprotocol import types
from pygls.capabilities import get_capability

from memzoi.base.views import Frontmatter

from . import keys, provenance, resident_view
from .convert import TextMap
from .documents import Snapshot, path_to_uri
from .markup import code, esc, link, to_plaintext
from .protocol import handler

if TYPE_CHECKING:
    from .session import ReadSession

log = logging.getLogger("memzoi_lsp.hover")


def for_client(ls: ReadSession, hover: types.Hover | None) -> types.Hover | None:
    """``hover`` in the format the client asked for (``hover.contentFormat``, most preferred first): Markdown
    unless the client prefers plaintext or does not list Markdown."""
    if hover is None or not isinstance(hover.contents, types.MarkupContent):
        return hover
    formats = [
        getattr(f, "value", f)
        for f in get_capability(ls.client_capabilities, "text_document.hover.content_format", None) or []
    ]
    if formats and (formats[0] == "plaintext" or "markdown" not in formats):
        hover.contents = types.MarkupContent(kind=types.MarkupKind.PlainText, value=to_plaintext(hover.contents.value))
    return hover


class Hover:
    """The hover feature (``textDocument/hover``): a read over the :class:`~memzoi_lsp.session.ReadSession` it is made
    with; it owns no state."""

    def __init__(self, ls: ReadSession) -> None:
        self._ls = ls

    def register(self, server: ReadSession) -> None:
        """Register ``textDocument/hover``."""
        server.feature(types.TEXT_DOCUMENT_HOVER)(handler(self.hover))

    async def hover(self, params: types.HoverParams) -> types.Hover | None:
        """The hover at the position, as the client shows it (:func:`markdown_hover`, :func:`for_client`)."""
        ls = self._ls
        return for_client(ls, await markdown_hover(ls, params))


async def markdown_hover(ls: ReadSession, params: types.HoverParams) -> types.Hover | None:
    """The hover at the position, in Markdown."""
    snap = ls.docs.snapshot(params.text_document.uri)
    if snap is None or not ls.is_memzoi(snap):
        return None
    tm = TextMap(snap.text, ls.workspace.position_encoding)
    offset = tm.offset(params.position)
    where = resident_view.file_of(ls, snap.path) if snap.analysis.placement.memzoi_dir is None else None
    if where is not None:
        return resident_view.hover(ls, snap, where, offset)
    doc = snap.analysis.document
    hit = keys.key_at(doc, offset)
    if hit is not None:
        path, node = hit
        text = key_doc(snap, path)
        if text is None:
            return None
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
            range=tm.range(node.start, node.end),
        )
    fm_end = doc.fm_close[1] if doc.fm_close else (doc.fm_end if doc.fm_end is not None else 0)
    if offset > fm_end or doc.data is None:
        return None
    commit = await cached_last_commit(ls, snap.path)
    text = provenance_markdown(ls, snap, commit)
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))


def key_doc(snap: Snapshot, path: tuple[str | int, ...]) -> str | None:
    """Markdown documentation of the key at ``path`` (description, required or optional, allowed values)."""
    found = keys.field_info(snap.analysis.document, snap.analysis.placement, path)
    dotted = ".".join(str(p) for p in path if not isinstance(p, int))
    if found is None:
        return f"**{code(dotted)}** is not a field of this file's schema (unknown keys are errors)."
    model, name, info = found
    lines = [f"**{code(dotted)}** · {'required' if info.is_required() else 'optional'}", ""]
    if info.description:
        lines.append(esc(info.description).replace("\\`", "`"))
    from memzoi.judge.schemainfo import allowed_values  # noqa: PLC0415 lazy: start-up

    allowed = allowed_values(info.annotation)
    if allowed:
        lines += ["", "Allowed values: " + ", ".join(code(v) for v in allowed)]
    lines += ["", f"_Schema: {esc(model.__name__)}_"]
    return "\n".join(lines)


async def cached_last_commit(ls: ReadSession, path: Path | None) -> dict[str, str] | None:
    """The last commit touching ``path`` from the project's git oracle (:meth:`memzoi.project.gitfacts.GitFacts.last_commit`,
    cached until the file or git's state changes), asked off the event loop."""
    if path is None:
        return None
    from memzoi.project.gitfacts import GitFacts  # noqa: PLC0415 lazy: start-up

    project = ls.project_for(path)
    git = project.git if project is not None else GitFacts(path.parent)
    return await asyncio.get_running_loop().run_in_executor(None, git.last_commit, path)


def provenance_markdown(ls: ReadSession, snap: Snapshot, commit: dict[str, str] | None) -> str:
    """The provenance hover of a record or proposal packet (see :mod:`memzoi_lsp.provenance` for the facts)."""
    facts = provenance.collect(ls, snap)
    fm = Frontmatter(snap.analysis.document.data)
    if snap.analysis.kind == "proposal" or snap.analysis.placement.role.is_proposal:
        out = _proposal_lines(ls, snap, fm, facts)
    else:
        out = _record_lines(ls, snap, fm, facts)
    # the text shown may be the editor's own decoding of bytes check refuses (a Latin-1 record): never present it as fine
    bad = [f for f in snap.analysis.findings if f.code == "invalid_encoding"]
    if bad:
        out.insert(1, f"- **not valid UTF-8** ({code('invalid_encoding')}): {esc(bad[0].message)}")
    if commit:
        out.append(
            f"- last commit: {code(commit['hash'])} {esc(commit['author'])}, {esc(commit['date'])}: "
            f"{esc(commit['subject'])}"
        )
    else:
        out.append("- last commit: none (not committed, or not in a git repository)")
    if facts.history_unavailable:  # never "no recorded changes": the ledger could not say
        out.append(f"- ledger history: unavailable: {esc(facts.history_unavailable)}")
    elif facts.history:
        out.append("- ledger history:")
        out += [f"  - {esc(line)}" for line in facts.history]
    else:
        out.append("- ledger history: no recorded changes")
    return "\n".join(out)


def _title(kind: str, fm: Frontmatter) -> str:
    from memzoi.judge.pathsafety import shown_id  # noqa: PLC0415 lazy: start-up

    return f"**{kind}** {code(shown_id(fm.id))}" + (f" — {esc(fm.title)}" if fm.title else "")


def _proposal_lines(ls: ReadSession, snap: Snapshot, fm: Frontmatter, facts: provenance.Facts) -> list[str]:
    block = fm.proposal
    out = [
        _title("Proposal", fm),
        f"- action {code(block.action)} · status {code(fm.status)} · type {code(fm.type)} · lane {code(fm.lane)}",
    ]
    if facts.proposed_via:
        out.append(f"- {esc(facts.proposed_via)}")
    else:
        if block.proposed_by or block.proposed_at:
            out.append(f"- proposed by {esc(block.proposed_by)} at {esc(block.proposed_at)}")
        if block.reason:
            out.append(f"- reason: {esc(block.reason)}")
    out += [f"- {esc(label)}: {_record_link(ls, snap, rid)}" for label, rid in facts.targets]
    out.append(f"- sensitivity {code(fm.sensitivity)} · content class {code(fm.content_class)}")
    out.append(f"- can be applied: {esc(facts.apply_state)}")
    res = fm.resolution
    if res:
        out.append(
            f"- resolved {code(res.get('outcome'))} by {esc(res.get('resolved_by'))} at "
            f"{esc(res.get('resolved_at'))}" + (f": {esc(res.get('reason'))}" if res.get("reason") else "")
        )
    return out


def _source_line(fm: Frontmatter) -> str | None:
    src, ref = fm.source, fm.source_ref
    if not (src or ref):
        return None
    ref_md = ""
    if ref:
        ref_md = link(ref, ref) if urlsplit(ref).scheme in ("http", "https") else code(ref)
    return f"- provenance: {code(src) if src else ''} {ref_md}".rstrip()


def _record_lines(ls: ReadSession, snap: Snapshot, fm: Frontmatter, facts: provenance.Facts) -> list[str]:
    out = [
        _title("Record", fm),
        f"- type {code(fm.type)} · lane {code(fm.lane)} · status {code(fm.status)}",
        f"- current assertion: {esc(facts.current)}",
    ]
    source = _source_line(fm)
    if source:
        out.append(source)
    if fm.proposal_id:
        out.append(f"- proposal: {_proposal_link(ls, snap, fm.proposal_id)}")
    origin = fm.origin
    if origin:
        out.append(f"- origin: route {code(origin.get('route'))}, key {code(origin.get('origin_key'))}")
    out.append(f"- attestation: {esc(facts.attestation)}")
    if fm.supersedes:
        out.append(f"- supersedes: {_record_link(ls, snap, fm.supersedes)}")
    out += [f"- superseded by: {_record_link(ls, snap, rid)}" for rid in facts.superseded_by]
    if fm.predecessor_id:
        out.append(f"- lineage: {esc(fm.lineage.get('kind'))} of {_record_link(ls, snap, fm.predecessor_id)}")
    out.append(f"- retention: {esc(facts.retention)}")
    return out


def _record_link(ls: ReadSession, snap: Snapshot, record_id: str) -> str:
    from memzoi.judge.pathsafety import bears_secret, shown_id  # noqa: PLC0415 lazy: start-up

    path = provenance.record_path(ls, snap, record_id)
    if path is None:
        return f"{code(shown_id(record_id))} (not found)"
    if bears_secret(path):  # a link would show the secret-bearing path
        return code(shown_id(record_id))
    return f"{code(shown_id(record_id))} ({link('open', path_to_uri(path))})"


def _proposal_link(ls: ReadSession, snap: Snapshot, proposal_id: str) -> str:
    from memzoi.judge.pathsafety import bears_secret, shown_id  # noqa: PLC0415 lazy: start-up

    path = provenance.proposal_path(ls, snap, proposal_id)
    if path is None:
        return f"{code(shown_id(proposal_id))} (no packet in this repository)"
    if bears_secret(path):
        return code(shown_id(proposal_id))
    return f"{code(shown_id(proposal_id))} ({link('resolved packet', path_to_uri(path))})"
