"""What the editor shows on a resident file: which file an open document is, its findings, the candidate behind
an entry, and the pending candidates (the language server only converts these to LSP).

Findings (spans are code-point offsets of the analysed text, which may be an unsaved buffer):

- ``resident_cap_usage`` (information) from 80 % of the cap, ``resident_over_cap`` (error) above it;
- the detectors' ``prompt_injection``, ``invisible_character``, credential and personal-data findings with exact
  ranges (the first three block every write);
- ``resident_drift`` (warning): the text would fail Zuno's ``RoundTrip`` or ``EntryOverflow`` check;
- ``resident_hand_edit`` (information): on each entry no reviewed candidate wrote (a file written entirely by hand
  gets one per entry), or on the first line when entries were removed or moved outside review;
- ``resident_uncertain`` (warning): a candidate of this file could not be classified after a crash.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..findings import Finding, finding
from ..ledger import Refusal
from ..workspace import find_project_root
from .candidates import Candidate
from .format import EntrySpan, char_count, entry_spans, round_trips, usage
from .reconcile import recovery_hint
from .scope import ResidentFile, which_file
from .threats import threat_findings
from .views import candidates_for, entry_provenance, last_written

#: Cap usage from which the information is shown (percent).
USAGE_WARN_PERCENT = 80


def _first_line(text: str) -> int:
    return len(text.split("\n", 1)[0].rstrip("\r"))


def findings(text: str, file: ResidentFile, history: list[Candidate]) -> list[Finding]:
    """Every finding of a resident file's ``text`` (see the module docstring); ``history`` is the file's
    candidates (:func:`memzoi.resident.views.candidates_for`). Threat findings use the file's accepted
    fingerprints, as the write path does (:mod:`.threats`)."""
    spans = entry_spans(text)
    entries = [s.text for s in spans]
    used, cap = char_count(entries), file.cap
    top = _first_line(text)
    out: list[Finding] = []
    label = usage(used, cap)
    if used > cap:
        out.append(finding("resident_over_cap", f"{label}: over the {file.scope} cap by {used - cap:,} characters; "
                           "every write is refused until an entry is removed or shortened", 0, top))
    elif cap and used * 100 >= USAGE_WARN_PERCENT * cap:
        out.append(finding("resident_cap_usage", f"{label}: close to the {file.scope} cap; consolidate entries "
                           "before adding more (nothing is evicted)", 0, top))
    out += _drift(text, spans, cap, top)
    out += threat_findings(text, file.accepted)
    out += _hand_edits(spans, file, history, top)
    for cand in history:
        if cand.status == "uncertain":
            out.append(finding("resident_uncertain", f"candidate {cand.id[:12]} ({cand.action}) could not be "
                               f"classified after a crash: {recovery_hint(cand.id)}", 0, top, candidate_id=cand.id))
    return sorted(out, key=lambda f: (f.start, f.end, f.code))


def _hand_edits(spans: list[EntrySpan], file: ResidentFile, history: list[Candidate], top: int) -> list[Finding]:
    """``resident_hand_edit`` findings: one on each entry no reviewed candidate wrote, by the hover's rule
    (:func:`.views.entry_provenance`), so a file written entirely by hand, with no candidate history, gets one on
    every entry; when every entry has a candidate but the file differs from what the last one left (an entry
    removed or moved by hand), one on the first line."""
    entries = [s.text for s in spans]
    last = last_written(history)
    since = f" since candidate {last[0].id[:12]} was {last[0].status}" if last else ""
    ids = {"candidate_id": last[0].id} if last else {}
    left = set(last[1]) if last else set()
    out = []
    for span, cand in zip(spans, entry_provenance(entries, history)):
        if cand is None:
            # An entry the last candidate found and left as it was predates it: written outside review, not
            # "edited since" that candidate (which never touched it).
            head = "Entry written by hand, not reviewed" if span.text in left or not last else \
                f"Entry edited by hand{since}"
            out.append(finding(
                "resident_hand_edit", f"{head}. It reaches every prompt, but no reviewed candidate wrote this "
                "entry; to adopt it into review, propose it unchanged (`memzoi resident propose "
                f"--scope {file.scope} --action add --content …`): an add of an existing entry records the "
                "review and leaves the file as it is", span.start, span.end, **ids))
    if not out and last is not None and last[1] != entries:
        out.append(finding("resident_hand_edit", f"Entries changed by hand{since}. An entry it left was removed or "
                           "moved outside review; propose such changes as candidates to keep them audited", 0, top,
                           **ids))
    return out


def check_file(path: Path, data: bytes | None = None,
               where: tuple[Path, ResidentFile] | None = None) -> tuple[str, list[Finding]] | None:
    """``(text, findings)`` of a resident file, as the editor shows them (``memzoi check .zuno/RULES.md``, or
    ``data`` read from stdin with ``--stdin-filename``), or ``None`` when ``path`` is not a resident file of the
    project found from it or from the working directory. Without ``data`` the file is read, and :class:`OSError`
    is raised when it cannot be. Bytes that are not UTF-8 (Zuno refuses such a file as ``Unreadable``) give
    ``invalid_encoding`` and are read with replacement characters. ``where`` is :func:`which_file`'s answer for
    ``path`` when the caller already asked it."""
    path = Path(os.path.abspath(path))
    where = where or which_file(path, [find_project_root(Path.cwd())])
    if where is None:
        return None
    root, file = where
    if data is None:
        data = path.read_bytes()
    try:
        text, extra = data.decode("utf-8"), []
    except UnicodeDecodeError as err:
        text = data.decode("utf-8", "replace")
        extra = [finding("invalid_encoding", f"the file is not valid UTF-8 (byte offset {err.start}), so Zuno "
                         "refuses to read or write it (Unreadable); re-save it as UTF-8", 0, 0)]
    found = findings(text, file, candidates_for(root, files=[file]))
    return text, extra + found


def _drift(text: str, spans: list[EntrySpan], cap: int, top: int) -> list[Finding]:
    out = []
    if not round_trips(text):
        out.append(finding("resident_drift", "RoundTrip: the file is not in the form memzoi writes (entries "
                           "trimmed, joined by a line holding only §, no empty entries); writes make a .bak copy "
                           "and are refused until it is", 0, top))
    for s in spans:
        if len(s.text) > cap:
            out.append(finding("resident_drift", f"EntryOverflow: this entry has {len(s.text):,} characters, more "
                               f"than the whole cap of {cap:,}; shorten or split it", s.start, s.end))
    return out


@dataclass(frozen=True)
class EntryFacts:
    """An entry under the cursor and the candidate that put it there (``None``: edited by hand)."""

    span: EntrySpan
    candidate: Candidate | None


def entry_at(text: str, offset: int, history: list[Candidate]) -> EntryFacts | None:
    """The entry containing code-point ``offset`` of ``text`` and its provenance, or ``None`` between entries."""
    spans = entry_spans(text)
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
