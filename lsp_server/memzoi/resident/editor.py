"""What the editor shows on a resident file: which file an open document is, its findings, the candidate behind
an entry, and the pending candidates (the language server only converts these to LSP).

Findings (spans are code-point offsets of the analysed text, which may be an unsaved buffer):

- ``resident_cap_usage`` (information) from 80 % of the cap, ``resident_over_cap`` (error) above it;
- the detectors' ``prompt_injection``, ``invisible_character``, credential and personal-data findings with exact
  ranges (the first three block every write);
- ``resident_drift`` (warning): the text would fail Zuno's ``RoundTrip`` or ``EntryOverflow`` check;
- ``resident_hand_edit`` (information): on each entry no reviewed candidate wrote (a file written entirely by hand
  gets one per entry), or on the first line when entries were removed or moved outside review;
- ``resident_uncertain`` (warning): a candidate of this file is uncertain (an interrupted write not classified on
  restart, or a write or undo refused because the file changed outside review), said as it happened.
- ``invalid_encoding`` (error): the file is UTF-16/32 or not UTF-8 (:func:`check_file`, :func:`buffer_findings`);
  any line ending (LF, CRLF, CR) and a UTF-8 byte order mark are read as Zuno's format (:mod:`.encoding`), and a
  file mixing line endings is ``resident_drift`` (``LineEndings``).

Each is graded by the project's ``[rules]`` like any other finding (:func:`graded`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.findings import Finding, finding
from ..judge.config import load_config
from ..judge.workspace import MEMZOI_DIR, find_project_root
from ..ledger import Refusal
from .candidates import Candidate
from .encoding import BOM, foreign_encoding, mixed_endings, wide_encoding
from .format import EntrySpan, char_count, entry_spans, round_trips, usage
from .reconcile import recovery_hint, uncertain_reason
from .scope import ResidentFile, which_file
from .store import read_raw, structural_drift
from .threats import threat_findings
from .views import candidates_for, entry_provenance, last_written

if TYPE_CHECKING:
    from ..judge.rules import Rules

#: Cap usage from which the information is shown (percent).
USAGE_WARN_PERCENT = 80


def _first_line(text: str) -> int:
    return len(re.split(r"\r\n|\r|\n", text, maxsplit=1)[0])


def _unmarked(text: str) -> str:
    """``text`` with a leading U+FEFF (a UTF-8 byte order mark kept by a client) made a space: the same length, so
    offsets stay those of ``text``, and trimmed away from entry 1 as Zuno never sees the mark."""
    return " " + text[1:] if text.startswith("\ufeff") else text


def findings(text: str, file: ResidentFile, history: list[Candidate]) -> list[Finding]:
    """Every finding of a resident file's ``text`` (see the module docstring); ``history`` is the file's
    candidates (:func:`memzoi.resident.views.candidates_for`). Threat findings use the file's accepted
    fingerprints, as the write path does (:mod:`.threats`). A byte order mark at the start of ``text`` (a client
    that keeps it) is read as the file's encoding mark, not as an invisible character of entry 1."""
    text = _unmarked(text)
    spans = entry_spans(text)
    entries = [s.text for s in spans]
    used, cap = char_count(entries), file.cap
    top = _first_line(text)
    out: list[Finding] = []
    label = usage(used, cap)
    if used > cap:
        out.append(
            finding(
                "resident_over_cap",
                f"{label}: over the {file.scope} cap by {used - cap:,} characters; "
                "every write is refused until an entry is removed or shortened",
                0,
                top,
            )
        )
    elif cap and used * 100 >= USAGE_WARN_PERCENT * cap:
        out.append(
            finding(
                "resident_cap_usage",
                f"{label}: close to the {file.scope} cap; consolidate entries before adding more (nothing is evicted)",
                0,
                top,
            )
        )
    out += _drift(text, spans, cap, top)
    out += threat_findings(text, file.accepted)
    out += _hand_edits(spans, file, history, top, _adoption(text, file, used))
    for cand in history:
        if cand.status == "uncertain":
            out.append(
                finding(
                    "resident_uncertain",
                    f"candidate {cand.id[:12]} ({cand.action}) {uncertain_reason(cand)}: {recovery_hint(cand.id)}",
                    0,
                    top,
                    candidate_id=cand.id,
                )
            )
    return sorted(out, key=lambda f: (f.start, f.end, f.code))


def _adoption(text: str, file: ResidentFile, used: int) -> str:
    """How an entry written by hand is adopted into review from the file as it is: proposed unchanged (an add of an
    existing entry records the review and writes nothing), after whatever refuses every such proposal now is fixed
    first: drift (:func:`.store.structural_drift`, checked before anything else) or a file over its cap (Zuno
    checks the cap on the result, which an unchanged add leaves over it)."""
    how = (
        f"propose it unchanged (`memzoi resident propose --scope {file.scope} --action add --content …`): an add of "
        "an existing entry records the review and leaves the file as it is"
    )
    if structural_drift(text, file.cap) is not None:
        return (
            f"every proposal is refused while the file drifts (see resident_drift): fix that by hand first, then {how}"
        )
    if used > file.cap:
        return (
            "the file is over its cap, so a proposal that leaves it so is refused: first bring it under the cap "
            "(remove or shorten entries by hand, or propose a `replace` or `remove`), then, to adopt it into "
            f"review, {how}"
        )
    return f"to adopt it into review, {how}"


def _hand_edits(
    spans: list[EntrySpan], file: ResidentFile, history: list[Candidate], top: int, adopt: str
) -> list[Finding]:
    """``resident_hand_edit`` findings: one on each entry no reviewed candidate wrote, by the hover's rule
    (:func:`.views.entry_provenance`), so a file written entirely by hand, with no candidate history, gets one on
    every entry; when every entry has a candidate but the file differs from what the last one left (an entry
    removed or moved by hand), one on the first line. ``adopt``: how such an entry is adopted (:func:`_adoption`)."""
    entries = [s.text for s in spans]
    last = last_written(history)
    since = f" since candidate {last[0].id[:12]} was {last[0].status}" if last else ""
    last_id = last[0].id if last else None
    left = set(last[1]) if last else set()
    # An unreviewed entry is an edit of one the last candidate left only when such an entry is gone; with all of
    # them still there it was added by hand and names no candidate (newuser5 D10).
    edited = bool(left - set(entries))
    out = []
    for span, cand in zip(spans, entry_provenance(entries, history)):
        if cand is None:
            # An entry the last candidate found and left as it was predates it: written outside review, not
            # "edited since" that candidate (which never touched it).
            if span.text in left or not last:
                head = "Entry written by hand, not reviewed"
            elif edited:
                head = f"Entry edited by hand{since}"
            else:
                head = "Entry added by hand (no reviewed candidate wrote it)"
            out.append(
                _hand_edit(
                    f"{head}. It reaches every prompt, but no reviewed candidate wrote this entry; {adopt}",
                    span.start,
                    span.end,
                    last_id,
                )
            )
    if not out and last is not None and last[1] != entries:
        out.append(
            _hand_edit(
                f"Entries changed by hand{since}. An entry it left was removed or "
                "moved outside review; propose such changes as candidates to keep them audited",
                0,
                top,
                last_id,
            )
        )
    return out


def _hand_edit(message: str, start: int, end: int, candidate_id: str | None) -> Finding:
    """A ``resident_hand_edit`` finding; its data names the last candidate (``candidate_id``) when there is one."""
    if candidate_id is None:
        return finding("resident_hand_edit", message, start, end)
    return finding("resident_hand_edit", message, start, end, candidate_id=candidate_id)


def check_file(
    path: Path, data: bytes | None = None, where: tuple[Path, ResidentFile] | None = None
) -> tuple[str, list[Finding]] | None:
    """``(text, findings)`` of a resident file, as the editor shows them (``memzoi check .zuno/RULES.md``, or
    ``data`` read from stdin with ``--stdin-filename``), or ``None`` when ``path`` is not a resident file of the
    project found from it or from the working directory. Without ``data`` the file is read, and :class:`OSError`
    is raised when it cannot be. The text is the file without its UTF-8 byte order mark (spans count from after
    it); any line ending is read (:mod:`.encoding`). Bytes Zuno cannot read (Zuno's ``Unreadable``; memzoi
    refuses every write to them) give an ``invalid_encoding`` error naming why and what to do: UTF-16/32 text
    (byte order mark or NUL bytes) gets no other finding, other bytes that are not UTF-8 are also checked as read
    with replacement characters.
    ``where`` is :func:`which_file`'s answer for ``path`` when the caller already asked it."""
    path = Path(os.path.abspath(path))
    where = where or which_file(path, [find_project_root(Path.cwd())])
    if where is None:
        return None
    root, file = where
    if data is None:
        data = path.read_bytes()
    why = foreign_encoding(data)
    raw = data[len(BOM) :] if data.startswith(BOM) else data
    text = raw.decode("utf-8", "replace")
    extra = (
        []
        if why is None
        else [
            finding(
                "invalid_encoding",
                f"{path}: {why}, so Zuno refuses to read it (Unreadable) and memzoi refuses every write "
                "to it; re-save it as UTF-8 (with or without a byte order mark, any line endings)",
                0,
                _first_line(text),
            )
        ]
    )
    if why is not None and wide_encoding(data) is not None:
        return text, graded(extra, root)
    return text, graded(extra + findings(text, file, candidates_for(root, files=[file])), root)


def graded(found: list[Finding], root: Path, rules: Rules | None = None) -> list[Finding]:
    """``found`` (a resident file's findings) graded by the ``[rules]`` of the project at ``root``, as every other
    file's findings are (:meth:`memzoi.judge.rules.Rules.apply`): severity overrides and disabled codes apply, and the
    codes nothing may suppress (secrets, prompt injection: :data:`memzoi.base.findings.UNSUPPRESSIBLE`) stay. ``ignore``
    patterns name files below ``.memzoi``, so none matches a resident file. ``rules``: the caller's when it has
    them (the language server adds the editor settings), else the project's ``.memzoi/config.toml`` (defaults
    when there is none; loading never raises)."""
    if rules is None:
        rules = load_config(root / MEMZOI_DIR).config.effective_rules
    return rules.apply(found) if found else []


def buffer_findings(text: str, file: ResidentFile, history: list[Candidate]) -> list[Finding]:
    """:func:`findings` of an editor buffer (``text`` as the client decoded it, unsaved edits included), plus an
    ``invalid_encoding`` error on the first line when the file on disk holds bytes Zuno cannot read (UTF-16/32 or
    not UTF-8, :func:`.encoding.foreign_encoding`): the client may decode them, but every write is refused."""
    out = findings(text, file, history)
    try:
        _, data, _ = read_raw(file.path)
    except Refusal:
        return out
    why = foreign_encoding(data) if data else None
    if why is None:
        return out
    return [
        finding(
            "invalid_encoding",
            f"{file.path}: on disk, {why}, so Zuno refuses to read it (Unreadable) and "
            "memzoi refuses every write to it; save it as UTF-8 (with or without a byte order mark, any line "
            "endings)",
            0,
            _first_line(text),
        )
    ] + out


def _drift(text: str, spans: list[EntrySpan], cap: int, top: int) -> list[Finding]:
    out = []
    mixed = mixed_endings(text)
    if mixed:
        out.append(
            finding(
                "resident_drift",
                f"the file mixes {mixed} line endings, so a write could "
                "not keep its other entries' bytes; writes make a .bak copy and are refused until it is "
                "re-saved with one line-ending style",
                0,
                top,
            )
        )
    if not round_trips(text):
        out.append(
            finding(
                "resident_drift",
                "the file is not in the form memzoi writes (entries "
                "trimmed, joined by a line holding only §, no empty entries); writes make a .bak copy "
                "and are refused until it is",
                0,
                top,
            )
        )
    for s in spans:
        if len(s.text) > cap:
            out.append(
                finding(
                    "resident_drift",
                    f"this entry is too long: it has {len(s.text):,} characters, more "
                    f"than the whole cap of {cap:,}; shorten or split it",
                    s.start,
                    s.end,
                )
            )
    return out


@dataclass(frozen=True)
class EntryFacts:
    """An entry under the cursor and the candidate that put it there (``None``: edited by hand)."""

    span: EntrySpan
    candidate: Candidate | None


def buffer_entries(text: str) -> list[str]:
    """The entries of an editor buffer's ``text`` (any line ending; a leading byte order mark is the mark)."""
    return [s.text for s in entry_spans(_unmarked(text))]


def entry_at(text: str, offset: int, history: list[Candidate]) -> EntryFacts | None:
    """The entry containing code-point ``offset`` of ``text`` and its provenance, or ``None`` between entries."""
    spans = entry_spans(_unmarked(text))
    for span, cand in zip(spans, entry_provenance([s.text for s in spans], history)):
        if span.start <= offset <= span.end:
            return EntryFacts(span, cand)
    return None


def pending(history: list[Candidate]) -> list[Candidate]:
    """The candidates a decision can act on (``pending`` and ``failed``: approve or reject), newest first."""
    return [c for c in history if c.status in ("pending", "failed")]


#: What the code lens counts, in order: candidates waiting for a first decision, and those waiting for an explicit
#: recovery. A ``failed`` candidate is neither (it was decided and its write refused; its actions stay offered).
LENS_STATUSES = ("pending", "uncertain")


def lens_groups(history: list[Candidate]) -> list[tuple[str, list[Candidate]]]:
    """``[(status, candidates)]`` for each of :data:`LENS_STATUSES` that has candidates, newest first."""
    groups = [(status, [c for c in history if c.status == status]) for status in LENS_STATUSES]
    return [(status, cands) for status, cands in groups if cands]


def undoable(history: list[Candidate], entries: list[str]) -> Candidate | None:
    """The last applied candidate when the file still holds exactly what it wrote (undo is then possible)."""
    last = last_written(history)
    if last is None or last[0].status != "applied" or last[1] != entries:
        return None
    return last[0]


def cap_status(text: str, file: ResidentFile) -> tuple[int, int, int, str]:
    """``(used, cap, entries, line)`` of a resident file's ``text`` (an open buffer or the disk): characters used
    against the cap (Zuno's count, delimiters included), the number of entries, and the line the editor shows (in
    the hover, the code lens and the clients' status), e.g. ``project memory [63% — 1,390/2,200 chars], 4
    entries``."""
    entries = [s.text for s in entry_spans(text)]
    used = char_count(entries)
    noun = "entry" if len(entries) == 1 else "entries"
    return used, file.cap, len(entries), f"{file.scope} memory {usage(used, file.cap)}, {len(entries)} {noun}"
