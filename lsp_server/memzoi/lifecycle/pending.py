"""The pending proposal packets of a project as every listing shows them: ``memzoi proposals list`` and ``show``,
the agent's ``list_pending`` tool and the editor's Memory Inbox build their rows here, each from the packet's
verdict and the one can-apply rule (:mod:`memzoi.lifecycle.readiness`), so they say the same of the same packet.

A row never carries secret text: a packet whose content detectors fire anywhere (a credential, personal data,
an invisible character, a prompt injection) has its title withheld, since the title may be where the secret or the
hostile text is; the row names the codes why, and says the packet holds a secret only when one of them is a secret
code. Every other text field is passed
through :func:`memzoi.safety.redact.scrub`. Ids and paths are shown as :mod:`memzoi.judge.pathsafety` shows them (a
file named after a credential is Memzoi's ``<redacted-path:…>``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.findings import CODES, Finding
from ..base.runtime_errors import RuntimeStateError
from ..base.views import Frontmatter
from ..judge import analysis as analysis_mod
from ..judge.pathsafety import shown_id, shown_path
from ..judge.workspace import walk
from ..ledger import Refusal
from ..ledger.view import LedgerView
from ..safety.redact import SECRET_CODES, scrub
from .layout import PENDING
from .propose import proposal_origin
from .readiness import Readiness, packet_readiness

if TYPE_CHECKING:
    from ..judge.analysis import Analysis
    from ..project.crossfile import Workspace
    from ..stores.index import Index


def _scrubbed(value: str | None) -> str | None:
    return scrub(value) if value is not None else None


def detector_codes(findings: Iterable[Finding]) -> tuple[str, ...]:
    """The codes of the content detectors that fired on the packet, sorted and once each: why its title is
    withheld (a credential, personal data, but also an invisible character or a prompt injection)."""
    return tuple(sorted({f.code for f in findings if CODES.get(f.code, (None, ""))[1] == "detector"}))


@dataclass(frozen=True)
class PendingPacket:
    """One pending packet as listings show it: ``id`` (its file id), ``path`` (relative to the project root),
    frontmatter facts (``None`` when absent or not text; ``target`` is ``proposal.target`` of a tombstone or the
    first ``supersedes`` of a supersede, Memzoi's ``target_id``; ``paths`` are ``scope.paths``, ``sources`` the
    ``sources`` entries, ``confidence`` as written), the client it came through (``proposed_via``, the ledger's
    source of the change that created it: ``mcp``, ``cli`` …; ``None`` when the ledger has no record of it), and
    the can-apply ``readiness``."""

    id: str
    path: str
    title: str | None
    action: str | None
    target: str | None
    sensitivity: str | None
    content_class: str | None
    proposed_by: str | None
    proposed_at: str | None
    readiness: Readiness
    title_withheld: bool = False
    #: The detector codes that withheld the title (:func:`detector_codes`), empty when it is shown.
    withheld_for: tuple[str, ...] = ()
    reason: str | None = None
    confidence: str | None = None
    paths: tuple[str, ...] = ()
    sources: tuple[dict[str, str], ...] = ()
    proposed_via: str | None = None

    @property
    def shown_title(self) -> str:
        """The title, or why there is none to show: the detector codes that withheld it (never its text), with
        "the packet holds a secret" only when a secret or personal-data code (:data:`SECRET_CODES`) is one."""
        if self.title_withheld:
            codes = ", ".join(self.withheld_for) or "a content detector fired"
            secret = any(c in SECRET_CODES for c in self.withheld_for) or not self.withheld_for
            return f"(title withheld: {'the packet holds a secret: ' if secret else ''}{codes})"
        return self.title or "(no title)"

    def to_json(self) -> dict[str, Any]:
        """The row of ``proposals list --json`` and the agent's ``list_pending``."""
        r = self.readiness
        return {
            "id": self.id,
            "path": self.path,
            "action": self.action,
            "target": self.target,
            "title": self.title,
            "sensitivity": self.sensitivity,
            "content_class": self.content_class,
            "proposed_by": self.proposed_by,
            "proposed_at": self.proposed_at,
            "title_withheld": self.title_withheld,
            "title_withheld_for": list(self.withheld_for),
            "can_apply": r.can_apply,
            "blocked_by": r.codes(),
            "statement": r.statement(),
            "blockers": [{"code": b.code, "message": b.message} for b in r.blockers],
            "can_route_local": r.can_route_local,
            "reason": self.reason,
            "confidence": self.confidence,
            "paths": list(self.paths),
            "sources": [dict(x) for x in self.sources],
            "proposed_via": self.proposed_via,
        }

    def details(self) -> list[str]:
        """``name: value`` lines of who proposed it, through which client, when, why, how sure, for which paths,
        from which sources and against which target (what ``proposals list`` and ``show`` print)."""
        facts = [
            ("proposed by", self.proposed_by),
            ("via", self.proposed_via),
            ("at", self.proposed_at),
            ("target", self.target),
            ("reason", self.reason),
            ("confidence", self.confidence),
            ("paths", ", ".join(self.paths) or None),
            ("sources", ", ".join(next(iter(x.values()), "") for x in self.sources) or None),
        ]
        return [f"{name}: {value}" for name, value in facts if value]


def pending_packet(
    root: Path, path: Path, analysis: Analysis, findings: Iterable[Finding], readiness: Readiness
) -> PendingPacket:
    """The row of the pending packet at ``path`` (below ``root``) from its analysis, its verdict's ``findings``
    and its ``readiness``."""
    found = list(findings)
    fm = Frontmatter(analysis.document.data)
    block = fm.proposal
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        rel = path.name
    withheld_for = detector_codes([*found, *analysis.findings])
    secret = bool(withheld_for)
    superseded = fm.supersedes_list
    scope = fm.packet_scope
    paths = (
        tuple(scrub(p) for p in scope.get("paths", ()) if isinstance(p, str))
        if isinstance(scope.get("paths"), list)
        else ()
    )
    raw_sources = analysis.document.data.get("sources") if isinstance(analysis.document.data, dict) else None
    sources = (
        tuple({k: scrub(v) for k, v in x.items() if isinstance(v, str)} for x in raw_sources if isinstance(x, dict))
        if isinstance(raw_sources, list)
        else ()
    )
    conf = block.data.get("confidence") if hasattr(block, "data") else None
    return PendingPacket(
        id=shown_id(path.stem),
        path=shown_path(rel),
        title=None if secret else _scrubbed(fm.title),
        action=_scrubbed(block.action),
        target=_scrubbed(block.target or (superseded[0][1] if superseded and block.action == "supersede" else None)),
        reason=_scrubbed(block.reason),
        confidence=scrub(str(conf)) if isinstance(conf, (str, int, float)) else None,
        paths=paths,
        sources=sources,
        proposed_via=_origin(root, path.stem),
        sensitivity=_scrubbed(fm.sensitivity),
        content_class=_scrubbed(fm.content_class),
        proposed_by=_scrubbed(block.proposed_by),
        proposed_at=_scrubbed(block.proposed_at),
        readiness=readiness,
        title_withheld=secret,
        withheld_for=withheld_for,
    )


def _origin(root: Path, packet_id: str) -> str | None:
    """The ledger's source of the change that created the pending packet (``mcp``, ``cli`` …), else ``None``."""
    try:
        origin = proposal_origin(root, packet_id)
    except (Refusal, RuntimeStateError, OSError, sqlite3.Error):
        return None
    return origin["proposed_via"] if origin else None


def _disk_workspace(root: Path) -> Workspace:
    """The project's cross-file workspace from its files (when no index can be opened)."""
    from ..project.crossfile import Workspace, git_plane_files  # noqa: PLC0415 lazy: start-up
    from ..project.filefacts import facts_from_analysis  # noqa: PLC0415 lazy: start-up

    ws = Workspace()
    for p in git_plane_files(root / ".memzoi"):
        ws.update(str(p), facts_from_analysis(analysis_mod.analyze_path(p)))
    return ws


def list_pending(root: Path, index: Index | None) -> list[PendingPacket]:
    """Every pending packet of the project at ``root`` on disk, in file name order, judged as ``memzoi check`` and
    the editor judge it (:func:`memzoi.project.verdict.judge` with git visibility asked once for all of them, the ledger,
    and the cross-file findings of the project, whose facts come from ``index``, an open and refreshed index of the
    project, or from the files when it is ``None``). Listed from the folder, not the index: the index keeps no
    file whose name bears a secret."""
    from ..project.gitfacts import GitFacts  # noqa: PLC0415 lazy: start-up
    from ..project.verdict import ProjectContext, judge  # noqa: PLC0415 lazy: start-up

    ws = index.workspace() if index is not None else _disk_workspace(root)
    paths = walk(root / PENDING).files
    git = GitFacts(root)
    git.ask(paths)
    ctx = ProjectContext.of(root / ".memzoi", git=git, ledger=LedgerView(root))
    out = []
    for path in paths:
        analysis = analysis_mod.analyze_path(path, config=ctx.config, now=ctx.now)
        key = str(path)
        findings = list(judge(path, analysis, ctx, cross=ws.findings_for(key)).findings)
        readiness = packet_readiness(root, analysis, findings, identity_resolved=ws.resolved_holder(key))
        out.append(pending_packet(root, path, analysis, findings, readiness))
    return out
