"""One entry point for analysing a file, used by ``memzoi check`` and the language server alike.

``analyze_text`` runs framing → YAML → legacy detection → schema validation for a single document and returns
an :class:`Analysis`; ``analyze_bytes`` decodes first. Both are total: any input gives findings, never an
exception. Results depend only on the text and the path, so callers cache them by content hash.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from ..base.findings import Finding, Fix, TextEdit, finding
from ..base.freshness import read_bytes
from ..base.utf8 import unencodable_span
from ..read.document import Document, frame
from ..read.text import decode
from ..safety.values import unprinted_keys
from .attestation import Attestation, check_attestation
from .binary import bounded
from .config import load_config
from .config_model import MemzoiConfig
from .configfile import config_findings, is_config_file, quiet_rule_names
from .legacy import UpgradeError, legacy_reasons, upgrade_ignores, upgrade_legacy
from .pathsafety import name_findings
from .policy import safety_findings
from .retention import RetentionMark, mark_findings, retention_mark, utc_now
from .validate import validate_document
from .workspace import Placement, Role, below_plane, place

#: Above this size the file is still framed and validated, but reported with ``file_too_large`` (Memzoi refuses
#: any single field over 512 KiB, reference §3.2).
MAX_FILE_BYTES = 512 * 1024


@dataclass
class Analysis:
    """Everything known about one document: its framing, placement, parsed model and findings (sorted by
    position). ``model`` is ``None`` when the frontmatter did not validate; ``legacy`` lists why it is legacy."""

    document: Document
    placement: Placement
    findings: list[Finding] = field(default_factory=list)
    model: BaseModel | None = None
    legacy: list[str] = field(default_factory=list)
    #: Attestation state of a record (``None`` for other kinds); see :mod:`memzoi.judge.attestation`.
    attestation: Attestation | None = None
    #: Where a valid active record's recall window ends (``None``: no boundary, or not evaluated): the clock-free
    #: fact its ``retention_query_only`` finding comes from, so a cached verdict can re-evaluate it at a later
    #: clock (:mod:`memzoi.stores.verdictcache`).
    retention: RetentionMark | None = None

    @property
    def text(self) -> str:
        """The analysed text; every finding span indexes into it."""
        return self.document.text

    @property
    def kind(self) -> str:
        """``record``, ``proposal``, ``reserved`` or ``unknown``."""
        if self.placement.role is Role.RESERVED:
            return "reserved"
        if self.placement.role.is_proposal:
            return "proposal"
        if self.placement.role is Role.RECORD:
            return "record"
        data = self.document.data or {}
        return {"memory": "record", "proposal": "proposal"}.get(str(data.get("kind")), "unknown")


def analyze_text(
    text: str,
    path: str | os.PathLike[str] | None = None,
    *,
    placement: Placement | None = None,
    now: datetime | None = None,
    config: MemzoiConfig | None = None,
) -> Analysis:
    """Analyse ``text`` as the file at ``path`` (the path decides its role; ``None`` means "infer from ``kind``").

    ``placement`` is ``place(path)`` when the caller already has it. ``now`` is the clock for retention
    (``retention_query_only``); default the current UTC time. ``config`` is the
    project configuration; by default it is read from the ``.memzoi`` directory above ``path`` (a batch caller
    reads it once and passes it). The result is a pure function of text, path, ``now`` and the configuration.
    """
    placement = placement or (place(path) if path is not None else Placement(Role.OTHER))
    if config is None:
        config = load_config(placement.memzoi_dir).config
    if placement.role is Role.RESERVED or scan_only(text, path, placement):
        return _scanned_only(text, path, placement, config)
    doc = frame(text)
    analysis = Analysis(doc, placement)
    findings = list(doc.findings)
    if doc.data is not None:
        reasons = legacy_reasons(doc.data)
        ignore: frozenset[tuple[str, tuple[Any, ...]]] = frozenset()
        if reasons:
            analysis.legacy = reasons
            ignore = upgrade_ignores(doc.data)
            findings.append(_legacy_finding(doc, placement, reasons))
        analysis.model, schema = validate_document(doc, placement, ignore=ignore)
        findings.extend(schema)
        if analysis.kind == "record" and not reasons:
            findings.extend(_record_state(analysis, now))
    findings.extend(safety_findings(doc, placement, config, legacy=bool(analysis.legacy)))
    if path is not None and placement.memzoi_dir is not None:
        findings.extend(name_findings(path))
    findings.extend(_raw_surrogate(text, findings))
    analysis.findings = bounded(text, sorted(unprinted_keys(doc, findings), key=lambda f: (f.start, f.end, f.code)))
    return analysis


def _raw_surrogate(text: str, found: list[Finding]) -> list[Finding]:
    """An ``invalid_encoding`` on the first lone surrogate written raw in ``text`` (an editor's text a client sent
    with a JSON ``\\ud800`` escape; decoded bytes never hold one), unless a finding already starts there."""
    at = unencodable_span(text)
    if at is None or any(f.start == at[0] for f in found):
        return []
    return [
        finding(
            "invalid_encoding",
            "the text holds a lone surrogate here (U+D800–U+DFFF, no Unicode character), "
            "which cannot be saved as UTF-8; delete it",
            *at,
        )
    ]


def analyze_bytes(
    data: bytes,
    path: str | os.PathLike[str] | None = None,
    *,
    placement: Placement | None = None,
    now: datetime | None = None,
    config: MemzoiConfig | None = None,
) -> Analysis:
    """Decode ``data`` (strict UTF-8, findings on bad bytes) and analyse it; adds ``file_too_large`` above
    :data:`MAX_FILE_BYTES`. A file that is not UTF-8 or holds NUL bytes gets at most one finding per code
    (:func:`memzoi.judge.binary.bounded`)."""
    decoded = decode(data)
    analysis = analyze_text(decoded.text, path, placement=placement, now=now, config=config)
    extra = list(decoded.findings)
    if len(data) > MAX_FILE_BYTES:
        extra.append(too_large(len(data), analysis.text))
    if extra:
        found = sorted(analysis.findings + extra, key=lambda f: (f.start, f.end, f.code))
        analysis.findings = bounded(analysis.text, found)
    return analysis


def too_large(size: int, text: str) -> Finding:
    """The ``file_too_large`` finding of a file of ``size`` bytes (above :data:`MAX_FILE_BYTES`) whose text is
    ``text``: on its first three code points."""
    return finding(
        "file_too_large",
        f"file is {size} bytes; Memzoi refuses files and fields over {MAX_FILE_BYTES} bytes, and above "
        "this size only Memzoi's write-safety rules are checked (the other content detectors are skipped): "
        "split or shorten the memory",
        0,
        min(3, len(text)),
    )


def analyze_path(
    path: str | os.PathLike[str],
    *,
    now: datetime | None = None,
    config: MemzoiConfig | None = None,
    placement: Placement | None = None,
) -> Analysis:
    """Read and analyse a file (``now``, ``config`` and ``placement`` as in :func:`analyze_text`); an unreadable
    file gives one finding instead of an exception."""
    placement = placement or place(path)
    try:
        data = read_bytes(path)
    except OSError as err:
        doc = frame("")
        msg = f"cannot read the file: {err.strerror or err}; check that it exists and is readable"
        return Analysis(doc, placement, [finding("canonical_path", msg, 0, 0)])
    return analyze_bytes(data, path, placement=placement, now=now, config=config)


def record_id_of(analysis: Analysis) -> str | None:
    """The id a record is known by: its path concept id under ``.memzoi/records/``, else its frontmatter ``id``."""
    if analysis.placement.role is Role.RECORD:
        return analysis.placement.identity
    raw = (analysis.document.data or {}).get("id")
    return raw.strip() if isinstance(raw, str) and raw.strip() else None


def _record_state(analysis: Analysis, now: datetime | None) -> list[Finding]:
    """Attestation (``materialization_metadata``, ``stale_attestation``) and retention (``retention_query_only``)
    findings of a current-profile record."""
    doc = analysis.document
    analysis.attestation = check_attestation(doc, record_id_of(analysis), valid=analysis.model is not None)
    found = list(analysis.attestation.findings)
    if analysis.model is not None:
        analysis.retention = retention_mark(doc)
        found.extend(mark_findings(analysis.retention, now or utc_now()))
    return found


def scan_only(text: str, path: str | os.PathLike[str] | None, placement: Placement) -> bool:
    """True for a file below a ``.memzoi`` directory that Memzoi never reads as a record or packet and that does
    not look like one: a hidden file (Memzoi's walk skips it), a file that is not Markdown (``config.toml``,
    notes), or Markdown outside ``records/`` and the proposal folders that does not start with frontmatter. It is committed like the rest, so it is still
    scanned for secrets (:func:`_scanned_only`); a stray file that does start with frontmatter is analysed in
    full (its ``kind`` says what it is meant to be)."""
    if placement.role is not Role.OTHER or placement.memzoi_dir is None or path is None:
        return False
    if placement.hidden or not os.fspath(path).endswith(".md"):  # Memzoi never reads a hidden file as anything
        return True
    return not text.lstrip("\ufeff").startswith(("---", "+++", "{"))


def _scanned_only(
    text: str, path: str | os.PathLike[str] | None, placement: Placement, config: MemzoiConfig
) -> Analysis:
    """A reserved file (``index.md``/``log.md``) or a stray file: no schema, but the content detectors on the
    whole text and Memzoi's detectors on its path, because it is committed with the records. The project's
    ``config.toml`` also gets its ``invalid_config`` findings (:mod:`memzoi.judge.configfile`). A reserved file
    with frontmatter below ``records/`` or ``proposals/`` also gets ``reserved_file`` (a warning: Memzoi skips it
    silently, reference §1.1, so whatever it was meant to say is lost)."""
    markdown = path is None or os.fspath(path).endswith(".md")
    doc = frame(text) if markdown else Document(text)
    findings: list[Finding] = []
    start = 1 if text.startswith("\ufeff") else 0
    if placement.role is Role.RESERVED and text.startswith("---", start) and (path is None or below_plane(path)):
        findings.append(
            finding(
                "reserved_file",
                "Memzoi ignores this file: `index.md` and `log.md` are reserved for human notes and never define "
                "a record or proposal, whatever their frontmatter says (it is still scanned for secrets); remove "
                "the frontmatter, or rename the file to the record's id",
                start,
                start + 3,
            )
        )
    scanned = safety_findings(doc, placement, config, memory=markdown)
    if is_config_file(path):
        # the project configuration: its own problems, and its [rules] code names are not secrets
        scanned = quiet_rule_names(text, scanned) + config_findings(text)
    findings.extend(scanned)
    if path is not None and placement.memzoi_dir is not None:
        findings.extend(name_findings(path))
    return Analysis(
        doc, placement, bounded(text, sorted(unprinted_keys(doc, findings), key=lambda f: (f.start, f.end, f.code)))
    )


def _legacy_finding(doc: Document, placement: Placement, reasons: list[str]) -> Finding:
    root = doc.mapping
    start, end = (1 if doc.bom else 0), (4 if doc.bom else 3)
    if root is not None and "profile" in root.entries:
        key, value = root.entries["profile"]
        start, end = key.start, value.end
    fixes: tuple[Fix, ...] = ()
    if doc.data is not None and placement.role is not Role.RESERVED:
        try:
            upgrade = upgrade_legacy(doc, placement)
            fixes = (Fix("Upgrade to the current Memzoi profile", tuple(upgrade.edits)),)
        except UpgradeError:
            fixes = ()
    message = (
        "legacy Memzoi profile (" + "; ".join(reasons) + "): current Memzoi refuses it; upgrade the file to "
        "`profile: memzoi` (code action, or `memzoi upgrade PATH --write`)"
    )
    return finding("legacy_profile", message, start, end, fixes=fixes, reasons=reasons)


def upgrade_text(text: str, path: str | os.PathLike[str] | None = None) -> tuple[str, list[str]]:
    """Upgrade a legacy record's or packet's text (:func:`memzoi.judge.legacy.upgrade_legacy`); returns
    ``(new text, changes)``. Raises :class:`UpgradeError`."""
    placement = place(path) if path is not None else Placement(Role.OTHER)
    doc = frame(text)
    upgrade = upgrade_legacy(doc, placement)
    return upgrade.text, upgrade.changes


__all__ = ["Analysis", "TextEdit", "analyze_bytes", "analyze_path", "analyze_text", "upgrade_text", "UpgradeError"]
