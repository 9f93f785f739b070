"""Document framing: BOM, YAML frontmatter block, H1 and body, with exact code-point offsets.

Rules follow Memzoi's ``split_frontmatter`` and ``body_without_matching_h1`` (reference §1.3): the file starts
with ``---`` and a line break, the frontmatter ends at the first line that is ``---``, one line break after it is
dropped, leading line breaks of the body are skipped, and an H1 (``# ``) at the body start must equal the title.
Framing never raises: every input gives a :class:`Document` plus findings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..base.findings import Finding, Fix, TextEdit, finding
from .text import BOM, RUST_WHITESPACE, LineIndex, line_ending, rust_trim
from .trimming import trim_frontmatter
from .yaml12 import YMap, YNode, load, to_python

_OPEN = re.compile(r"---[ \t]*(\r\n|\n|\r)")
_CLOSE = re.compile(r"\n---[ \t]*(?=\r?\n|\r|$)")
_BREAK = re.compile(r"\r\n|\n|\r")


_BREAKS = re.compile(r"[\r\n]*")
_LINE = re.compile(r"[^\r\n]*")
_LEADING_SPACE = re.compile("[" + RUST_WHITESPACE + "]*")


@dataclass(eq=False)
class Document:
    """A framed Markdown document.

    Offsets are into :attr:`text` (the decoded text, BOM included as U+FEFF when present).

    * ``fm_start``/``fm_end``: the YAML content between the ``---`` lines (``None`` when there is no block);
    * ``body_start``: first offset after the closing ``---`` line and its line break;
    * ``h1``: ``(start, end)`` of the H1 heading text (after ``# ``), or ``None``;
    * ``body_span``: the body after H1 removal, trimmed (Memzoi's record body);
    * ``yaml_root``: the positioned YAML tree; ``data``: the frontmatter as plain Python (``None`` when it is
      missing, unparsable or not a mapping); ``yaml_one_line``: every scalar of the tree is on one line and none
      is a block scalar (the YAML accelerator's subset), so only an escape makes a value differ from its text.
    """

    text: str
    findings: list[Finding] = field(default_factory=list)
    bom: bool = False
    fm_open_end: int | None = None
    fm_start: int | None = None
    fm_end: int | None = None
    fm_close: tuple[int, int] | None = None
    body_start: int | None = None
    yaml_root: YNode | None = None
    yaml_one_line: bool = False
    data: dict[str, Any] | None = None
    h1: tuple[int, int] | None = None
    body_span: tuple[int, int] = (0, 0)

    @cached_property
    def lines(self) -> LineIndex:
        """Line index of :attr:`text`."""
        return LineIndex(self.text)

    @property
    def newline(self) -> str:
        """The document's line ending, used when an edit inserts lines."""
        return line_ending(self.text)

    @property
    def body(self) -> str:
        """Memzoi's record body: after the matching H1, leading line breaks removed, trimmed."""
        return self.text[self.body_span[0] : self.body_span[1]]

    @property
    def h1_text(self) -> str | None:
        """The H1 heading text, trimmed, or ``None``."""
        return None if self.h1 is None else rust_trim(self.text[self.h1[0] : self.h1[1]])

    @property
    def mapping(self) -> YMap | None:
        """The frontmatter's top-level mapping node, when it is one."""
        return self.yaml_root if isinstance(self.yaml_root, YMap) else None

    def line_of(self, offset: int) -> tuple[int, int]:
        """``(start, end)`` of the content of the line holding ``offset``."""
        line, _ = self.lines.position(offset)
        return self.lines.line_span(line)


def bom_finding() -> Finding:
    """The ``bom`` finding of a text that starts with U+FEFF (span ``[0, 1)``, with the quick fix that deletes it):
    :func:`frame`'s, and the one :mod:`memzoi.judge.diskbytes` reports from a file's bytes."""
    return finding(
        "bom",
        "file starts with a UTF-8 byte order mark; Memzoi files are written without one",
        0,
        1,
        fixes=(Fix("Remove the byte order mark", (TextEdit(0, 1, ""),)),),
    )


def frame(text: str) -> Document:
    """Split ``text`` into frontmatter and body and parse the frontmatter. Never raises.

    Findings: ``bom``, ``frontmatter_missing`` (naming TOML ``+++`` or JSON when found), ``frontmatter_unclosed``,
    ``frontmatter_not_mapping`` and every YAML finding of :func:`memzoi.read.yaml12.load`.
    """
    doc = Document(text)
    base = 0
    if text.startswith(BOM):
        doc.bom = True
        base = 1
        doc.findings.append(bom_finding())
    m = _OPEN.match(text, base)
    if not m:
        _missing_frontmatter(doc, base)
        return doc
    doc.fm_open_end = m.end()
    doc.fm_start = doc.fm_open_end
    close = _CLOSE.search(text, doc.fm_open_end - 1)
    if close is None:
        first_end = base + 3
        doc.findings.append(
            finding(
                "frontmatter_unclosed",
                "frontmatter is not closed: add a line `---` after the last field",
                base,
                first_end,
            )
        )
        doc.fm_end = len(text)
        return doc
    doc.fm_end = max(close.start(), doc.fm_start)
    close_start = close.start() + 1
    doc.fm_close = (close_start, close.end())
    after = close.end()
    nl = _BREAK.match(text, after)
    doc.body_start = nl.end() if nl else after
    result = load(text, doc.fm_start, doc.fm_end, doc.line_of)
    doc.findings.extend(result.findings)
    doc.yaml_root = result.root
    doc.yaml_one_line = result.one_line
    if result.root is None:
        if not any(f.code in ("yaml_syntax", "yaml_tab_indent", "yaml_nesting_limit") for f in result.findings):
            doc.data = {}  # empty or comment-only frontmatter: an empty mapping
    elif isinstance(result.root, YMap):
        doc.data = trim_frontmatter(to_python(result.root))
    else:
        doc.findings.append(
            finding(
                "frontmatter_not_mapping",
                "frontmatter must be a YAML mapping of `key: value` fields, not a list or a single value",
                result.root.start,
                result.root.end,
            )
        )
    _frame_body(doc)
    return doc


def _missing_frontmatter(doc: Document, base: int) -> None:
    text = doc.text
    first = re.match(r"[^\r\n]*", text[base:])
    end = base + (first.end() if first else 0)
    head = text[base:].lstrip(" \t\r\n")
    if head.startswith("+++"):
        what = "found TOML `+++` frontmatter; Memzoi records require YAML frontmatter between `---` lines"
    elif head.startswith("{"):
        what = "found JSON frontmatter; Memzoi records require YAML frontmatter between `---` lines"
    elif not text[base:].strip():
        what = "file is empty; a Memzoi file starts with YAML frontmatter between `---` lines"
    else:
        what = "missing YAML frontmatter: the file must start with a `---` line, the fields, and a closing `---`"
    doc.findings.append(finding("frontmatter_missing", what, base, end))
    doc.body_start = base
    _frame_body(doc)


def _run_end(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """The end of ``pattern``'s run at ``pos``: the patterns given (``_BREAKS``, ``_LINE``, ``_LEADING_SPACE``)
    match the empty string, so a match exists at every position up to ``len(text)``."""
    run = pattern.match(text, pos)
    return run.end() if run is not None else pos


def _frame_body(doc: Document) -> None:
    # Runs of breaks, the H1 line and the trimmed body are found with regular expressions and str.rstrip
    # (C loops) rather than character by character: this runs for every file of a workspace check.
    text = doc.text
    size = len(text)
    pos = doc.body_start if doc.body_start is not None else size
    pos = _run_end(_BREAKS, text, pos)
    if text.startswith("# ", pos):
        line_end = _run_end(_LINE, text, pos)
        doc.h1 = (pos + 2, line_end)
        pos = _run_end(_BREAKS, text, line_end)
    pos = _run_end(_LEADING_SPACE, text, pos)
    end = len(text.rstrip(RUST_WHITESPACE)) if size and text[-1] in RUST_WHITESPACE else size
    doc.body_span = (pos, max(end, pos))
