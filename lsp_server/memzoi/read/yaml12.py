"""A positioned YAML 1.2 (core schema) loader for frontmatter, built on PyYAML's event parser.

Why not ``yaml.safe_load``: PyYAML resolves scalars with YAML 1.1 rules (``no`` → ``False``, dates →
``datetime``), silently keeps the last of duplicate keys, expands aliases and loses positions. Memzoi reads
frontmatter with serde_yaml, i.e. YAML 1.2 core-schema scalars, so this loader builds its own tree from the
parser's events (libyaml's C parser when PyYAML was built with it) and:

* resolves plain scalars with the core schema only (null, bool, int, float; everything else stays a string,
  so timestamps stay the exact text written);
* keeps the code-point span of every key and value;
* reports duplicate keys, non-string keys, anchors and aliases (never expanded), tab indentation and syntax
  errors as findings with positions, and never raises;
* refuses nesting deeper than :data:`memzoi.base.nesting.NESTING_LIMIT` (``yaml_nesting_limit``, at the first
  container past the limit) while reading the events, so building and converting the tree never recurses more
  than that many levels.

The node types live in :mod:`memzoi.read.yaml_tree`. Frontmatter in the common block subset that Memzoi writes is read by the private
accelerator :mod:`memzoi.read.yaml_fast` (the subset is described there): :func:`load` tries it first, and it gives up
(``None``) on anything else; where it answers, the tree is the one the event path builds. Nothing else in the
package imports the accelerator.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from ..base.findings import Finding, Fix, TextEdit, finding
from ..base.nesting import NESTING_LIMIT, nesting_message
from ..base.utf8 import encodable, unencodable_span
from .yaml_encoding import escape_out_of_range, unencodable_findings
from .yaml_fast import fast_load
from .yaml_quote import quote_fix

# The tree's names are the reader's public names: other modules import them from here.
# Re-exported (also imported from here).
from .yaml_tree import (
    PlainScalar as PlainScalar,
    YAlias as YAlias,
    YMap as YMap,
    YNode as YNode,
    YScalar as YScalar,
    YSeq as YSeq,
    locate as locate,
    resolve_plain as resolve_plain,
    to_python as to_python,
)

#: ``line_of(offset)``: the ``(start, end)`` of the line of ``text`` holding ``offset``.
LineOf = Callable[[int], tuple[int, int]]

_Loader: type[Any]
try:  # libyaml's C parser is several times faster; the pure-Python parser gives identical events.
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader

_STANDARD_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:map",
    "tag:yaml.org,2002:seq",
}


@dataclass(slots=True)
class YamlResult:
    """The root node (``None`` when the text could not be parsed) and the findings about it."""

    root: YNode | None
    findings: list[Finding]
    #: the accelerator built the tree: every scalar is on one line, and no block scalar (:mod:`.yaml_fast`)
    one_line: bool = False


class _Builder:
    """Builds nodes from parser events, collecting findings; offsets are shifted by ``base``."""

    def __init__(self, source: str, base: int, full_text: str, line_of: LineOf) -> None:
        self.source = source
        self.base = base
        self.full_text = full_text
        self.line_of = line_of
        self.findings: list[Finding] = []
        self.events: list[Any] = []
        self.pos = 0

    def span(self, ev: Any) -> tuple[int, int]:
        return self.base + ev.start_mark.index, self.base + ev.end_mark.index

    def _value_fix(self, start: int) -> tuple[Fix, ...]:
        ls, le = self.line_of(start)
        fix = quote_fix(self.full_text, ls, le)
        return (fix,) if fix else ()

    def node(self) -> YNode:
        ev = self.events[self.pos]
        self.pos += 1
        start, end = self.span(ev)
        anchor = getattr(ev, "anchor", None)
        if anchor is not None and not isinstance(ev, yaml.AliasEvent):
            self.findings.append(
                finding(
                    "yaml_alias",
                    f"YAML anchor `&{anchor}` is not allowed in Memzoi frontmatter (anchors and aliases are never "
                    "expanded); write the value out, or quote it if `&` is part of the text",
                    start,
                    min(end, start + len(anchor) + 1),
                    fixes=self._value_fix(start),
                )
            )
        tag = getattr(ev, "tag", None)
        if isinstance(ev, yaml.ScalarEvent):
            if tag and tag not in _STANDARD_TAGS and tag != "!":
                self.findings.append(
                    finding("yaml_syntax", f"YAML tag `{tag}` is not supported; remove the tag", start, end)
                )
            if ev.style in (None, "") and ev.implicit[0]:
                resolved = resolve_plain(ev.value)
                value: Any = None if resolved is None else PlainScalar(ev.value, resolved)
            elif tag == "tag:yaml.org,2002:null":
                value = None
            else:
                value = ev.value
            return YScalar(value, start, end, ev.style or "")
        if isinstance(ev, yaml.AliasEvent):
            self.findings.append(
                finding(
                    "yaml_alias",
                    f"YAML alias `*{ev.anchor}` is not allowed in Memzoi frontmatter (it is never expanded); "
                    "write the value out, or quote it if it starts with `*`",
                    start,
                    end,
                    fixes=self._value_fix(start),
                )
            )
            return YAlias(ev.anchor or "", start, end)
        if isinstance(ev, yaml.SequenceStartEvent):
            items: list[YNode] = []
            while not isinstance(self.events[self.pos], yaml.SequenceEndEvent):
                items.append(self.node())
            end_ev = self.events[self.pos]
            self.pos += 1
            return YSeq(items, start, self.base + end_ev.end_mark.index, bool(ev.flow_style))
        if isinstance(ev, yaml.MappingStartEvent):
            mapping = YMap({}, start, start, bool(ev.flow_style))
            while not isinstance(self.events[self.pos], yaml.MappingEndEvent):
                key = self.node()
                value = self.node()
                self._add_entry(mapping, key, value)
            end_ev = self.events[self.pos]
            self.pos += 1
            mapping.end = self.base + end_ev.end_mark.index
            return mapping
        raise ValueError(f"unexpected YAML event {type(ev).__name__}")  # pragma: no cover - parser invariant

    def _add_entry(self, mapping: YMap, key: YNode, value: YNode) -> None:
        if (
            not isinstance(key, YScalar)
            or not isinstance(key.value, str)
            or (isinstance(key.value, PlainScalar) and not isinstance(key.value.resolved, str))
        ):
            shown = key.value if isinstance(key, YScalar) and key.value is not None else "null"
            if isinstance(key, (YSeq, YMap)):
                shown = "a collection"
            self.findings.append(
                finding(
                    "non_string_key",
                    f"mapping key {shown!s} is not a string; Memzoi keys are field names such as `title`",
                    key.start,
                    key.end,
                )
            )
            return
        name = str(key.value)
        mapping.order.append(key)
        if name in mapping.entries:
            first = mapping.entries[name][0]
            line = self.full_text.count("\n", 0, first.start) + 1
            self.findings.append(
                finding(
                    "duplicate_key",
                    f"duplicate key `{name}` (first defined on line {line}); keep one of them",
                    key.start,
                    key.end,
                    first_start=first.start,
                )
            )
            return
        mapping.entries[name] = (key, value)


def _tab_indent_findings(text: str, start: int, end: int) -> list[Finding]:
    """Findings for tabs in the indentation of frontmatter lines, each with a "use two spaces" fix."""
    out: list[Finding] = []
    for m in re.finditer(r"(?m)^[ \t]*\t[ \t]*(?=\S)", text[start:end]):
        s, e = start + m.start(), start + m.end()
        indent = text[s:e]
        tab = s + indent.index("\t")
        out.append(
            finding(
                "yaml_tab_indent",
                "tab used for indentation; YAML indentation must use spaces",
                tab,
                tab + 1,
                fixes=(
                    Fix(
                        "Replace tabs in the indentation with two spaces", (TextEdit(s, e, indent.replace("\t", "  ")),)
                    ),
                ),
            )
        )
    return out


def load(text: str, start: int, end: int, line_of: LineOf) -> YamlResult:
    """Parse ``text[start:end]`` as one YAML document.

    ``line_of(offset)`` returns the ``(start, end)`` of the line containing ``offset`` in ``text`` (used to
    offer "quote this value" fixes). Node spans and finding spans are offsets into ``text``. Never raises.
    """
    result = _load(text, start, end, line_of)
    if result.root is not None and ("\\" in text[start:end] or not encodable(text[start:end])):
        result.findings.extend(unencodable_findings(result.root))
    return result


def _load(text: str, start: int, end: int, line_of: LineOf) -> YamlResult:
    fast = fast_load(text, start, end)
    if fast is not None:
        return YamlResult(fast, [], one_line=True)
    source = text[start:end]
    result = _parse(source, start, text, line_of)
    if isinstance(result, YamlResult):
        return result
    syntax = result
    tabs = _tab_indent_findings(text, start, end)
    if tabs:
        # Parse again with each indentation tab replaced by one space (offsets unchanged), so the rest of the
        # frontmatter still yields values and findings.
        chars = list(source)
        for f in tabs:
            for i in range(f.fixes[0].edits[0].start - start, f.fixes[0].edits[0].end - start):
                if chars[i] == "\t":
                    chars[i] = " "
        retry = _parse("".join(chars), start, text, line_of)
        if isinstance(retry, YamlResult):
            retry.findings[:0] = tabs
            return retry
        return YamlResult(None, tabs + [retry])
    return YamlResult(None, [syntax])


def _parse(source: str, base: int, text: str, line_of: LineOf) -> YamlResult | Finding:
    builder = _Builder(source, base, text, line_of)
    events = _events(source, base, text, line_of, _Loader)
    if isinstance(events, Finding) and events.data.get("escape") and _Loader is not yaml.SafeLoader:
        # libyaml refuses a surrogate escape (`\uD800`) as Memzoi does; PyYAML's own parser decodes it, so the
        # file gets `invalid_encoding` on that value (as the accelerator's tree does) and its other values are read
        events = _events(source, base, text, line_of, yaml.SafeLoader)
    if isinstance(events, Finding):
        events.data.pop("escape", None)
        return events
    builder.events = events
    docs = [i for i, ev in enumerate(events) if isinstance(ev, yaml.DocumentStartEvent)]
    if not docs:
        return YamlResult(None, [])
    if len(docs) > 1:
        s = base + events[docs[1]].start_mark.index
        builder.findings.append(
            finding(
                "yaml_syntax",
                "frontmatter holds more than one YAML document; remove the `...` or `---` marker",
                s,
                s + 3,
            )
        )
    builder.pos = docs[0] + 1
    root = builder.node()
    return YamlResult(root, builder.findings)


def _events(source: str, base: int, text: str, line_of: LineOf, loader: type[Any]) -> list[Any] | Finding:
    """The parser events of ``source`` read with ``loader``, or the finding that stopped it."""
    events: list[Any] = []
    depth = 0
    try:
        for ev in yaml.parse(source, Loader=loader):
            kind = type(ev)
            if kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                depth += 1
                if depth > NESTING_LIMIT:  # stop reading: the builder's recursion stays within the limit
                    at = base + (ev.start_mark.index if ev.start_mark is not None else 0)
                    return finding(
                        "yaml_nesting_limit",
                        f"YAML value {nesting_message()}",
                        at,
                        min(at + 1, base + len(source)),
                        limit=NESTING_LIMIT,
                    )
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                depth -= 1
            events.append(ev)
    except yaml.MarkedYAMLError as err:
        if "maximum nesting depth" in (err.problem or "") and err.problem_mark is not None:
            # libyaml's scanner looks ahead through flow brackets (`[[[[…`) and stops at its own depth limit
            # before the parser hands us the events that would pass ours: the same finding, at its mark
            at = base + min(err.problem_mark.index, len(source))
            return finding(
                "yaml_nesting_limit",
                f"YAML value {nesting_message()}",
                at,
                min(at + 1, base + len(source)),
                limit=NESTING_LIMIT,
            )
        found = _syntax_finding(err, base, text, line_of)
        if "invalid Unicode character escape" in (err.problem or ""):
            found.data["escape"] = True
        return found
    except yaml.reader.ReaderError as err:
        at = base + max(0, min(err.position, len(source)))
        return finding(
            "yaml_syntax",
            f"character U+{err.character:04X} is not allowed in YAML text; remove it, or write it as an escape "
            "(\\u....) inside a double-quoted value",
            at,
            min(at + 1, base + len(source)),
        )
    except UnicodeError:  # libyaml takes UTF-8: a raw lone surrogate (a client's text) cannot be given to it
        at = base + (unencodable_span(source) or (0, 0))[0]
        return finding(
            "yaml_syntax",
            f"character U+{ord(text[at]) if at < len(text) else 0:04X} is not allowed in "
            "YAML text (a lone surrogate, no Unicode character); remove it",
            at,
            min(at + 1, base + len(source)),
        )
    except (ValueError, OverflowError):  # PyYAML's chr() of a `\U` escape past U+10FFFF (libyaml refuses it)
        return escape_out_of_range(source, base)
    except yaml.YAMLError as err:  # pragma: no cover - every other PyYAML error is marked
        return finding("yaml_syntax", f"YAML error: {err}; fix the frontmatter", base, base)
    return events


def _syntax_finding(err: yaml.MarkedYAMLError, base: int, text: str, line_of: LineOf) -> Finding:
    mark = err.problem_mark or err.context_mark
    if (
        err.context_mark is not None
        and err.problem_mark is not None
        and err.context_mark.line < err.problem_mark.line
        and (err.context or "").startswith(("while parsing a flow", "while scanning a quoted"))
    ):
        # An unclosed flow collection or quoted scalar is only noticed lines later: point at where it opened.
        mark = err.context_mark
    at = base + (mark.index if mark else 0)
    at = min(at, len(text))
    problem = (err.problem or "invalid YAML").rstrip(".")
    ls, le = line_of(at)
    fix = quote_fix(text, ls, le)
    context = f" ({err.context})" if err.context else ""
    if fix is not None:
        key = fix.title.split("`")[1]
        message = (
            f"YAML syntax error in the value of `{key}`: {problem}{context}. Characters such as `: `, `#`, `[`, "
            "`{`, `*`, `&` or a leading `@` need quotes; quote the value"
        )
    else:
        message = f"YAML syntax error: {problem}{context}; fix the YAML at this position"
    end = at + 1 if at < le else at
    return finding("yaml_syntax", message, at, end, fixes=(fix,) if fix else ())
