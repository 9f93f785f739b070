"""``yaml_cursor.value_path_at``: the key path of the value at a cursor, from the positioned tree when the
frontmatter parses and from indentation while it does not."""

from __future__ import annotations

import pytest

from memzoi.read.document import frame
from memzoi.read.yaml_cursor import value_path_at

FRONT = """---
id: rec-x
lane: semantic
title: "Use pnpm"  # a comment
scope:
  kind: repo
tags: [alpha, beta]
retention: {explicit_expires_at: "2027-01-01T00:00:00Z"}
supersedes:
  - first
  - second
sources:
  - path: src/app.ts
    url: https://example.com/x
  - ref: abc
capture: |
  line one
  line two
status:
---

# Use pnpm

- not: frontmatter
"""


def at(text: str, marker: str, shift: int = 0, nth: int = 0):
    """The path at ``marker`` (its ``nth`` occurrence) plus ``shift`` code points."""
    pos = -1
    for _ in range(nth + 1):
        pos = text.index(marker, pos + 1)
    return value_path_at(frame(text), pos + shift)


def test_the_positioned_tree_is_used_when_the_frontmatter_parses():
    assert frame(FRONT).mapping is not None
    cases = [
        ("rec-x", 2, ("id",)),
        ("semantic", 8, ("lane",)),  # cursor at the end of the value
        ('"Use pnpm"', 0, ("title",)),
        ("kind: repo", 7, ("scope", "kind")),
        ("beta", 1, ("tags", 1)),
        ("alpha", 0, ("tags", 0)),
        ('"2027', 3, ("retention", "explicit_expires_at")),
        ("second", 3, ("supersedes", 1)),
        ("first", 0, ("supersedes", 0)),
        ("src/app.ts", 4, ("sources", 0, "path")),
        ("https://", 5, ("sources", 0, "url")),
        ("abc", 3, ("sources", 1, "ref")),
        ("line two", 4, ("capture",)),  # inside a block scalar
        ("|\n  line one", 1, ("capture",)),  # after the block indicator
        ("status:", 7, ("status",)),  # an empty value, cursor right after the colon
    ]
    for marker, shift, want in cases:
        assert at(FRONT, marker, shift) == want, marker


def test_keys_comments_the_body_and_the_opening_line_are_no_value():
    for marker, shift in [
        ("lane", 2),
        ("# a comment", 4),
        ("not: frontmatter", 6),
        ("---", 2),
        ("scope:", 2),
        ("url:", 1),
    ]:
        assert at(FRONT, marker, shift) is None, marker
    assert value_path_at(frame(FRONT), len(FRONT)) is None  # end of file, in the body
    assert value_path_at(frame(FRONT), len(FRONT) + 5) is None


def test_an_empty_value_and_a_block_key_own_the_rest_of_their_line():
    text = "---\nlane: \nscope:\n  kind: \nsupersedes:\n  - \n---\n"
    assert frame(text).mapping is not None
    assert at(text, "lane: ", 6) == ("lane",)
    assert at(text, "scope:", 6) == ("scope",)  # before the nested block starts
    assert at(text, "kind: ", 6) == ("scope", "kind")
    assert at(text, "  - ", 4) == ("supersedes", 0)


def test_crlf_and_a_cursor_at_the_end_of_an_unclosed_file():
    crlf = FRONT.replace("\n", "\r\n")
    assert at(crlf, "second", 6) == ("supersedes", 1)
    assert at(crlf, "kind: repo", 10) == ("scope", "kind")
    assert at(crlf, "line two", 8) == ("capture",)
    typing = "---\nid: rec-x\nlane: "  # still being typed: no closing line yet, cursor at the end of the file
    assert value_path_at(frame(typing), len(typing)) == ("lane",)
    assert value_path_at(frame(typing + "\r\n"), len(typing)) == ("lane",)


BROKEN = """---
id: rec-x
title: a: b: [
scope:
  kind: re
supersedes:
  - one
  # a comment between items
  - tw
sources:
  - path: src/app.ts
    url: https
tags: [a, b
lane: sem  # typed
---
"""


def test_the_tolerant_mode_reads_indentation_while_the_yaml_is_broken():
    assert frame(BROKEN).mapping is None  # the YAML does not parse
    assert at(BROKEN, "kind: re", 8) == ("scope", "kind")
    assert at(BROKEN, "- tw", 4) == ("supersedes", 1)
    assert at(BROKEN, "- one", 2) == ("supersedes", 0)
    assert at(BROKEN, "url: https", 10) == ("sources", 0, "url")
    assert at(BROKEN, "path: src", 9) == ("sources", 0, "path")
    assert at(BROKEN, "tags: [a, b", 11) == ("tags", 1)
    assert at(BROKEN, "lane: sem", 9) == ("lane",)
    assert at(BROKEN, "# typed", 3) is None  # in a comment
    assert at(BROKEN, "# a comment", 5) is None
    assert at(BROKEN, "scope:", 3) is None  # on a key
    crlf = BROKEN.replace("\n", "\r\n")
    assert at(crlf, "- tw", 4) == ("supersedes", 1)
    assert at(crlf, "url: https", 10) == ("sources", 0, "url")


def test_the_tolerant_mode_stops_at_the_closing_line_and_needs_an_opening_one():
    text = BROKEN + "\n# Title\n\nlane: semantic\n"
    assert at(text, "lane: semantic", 9) is None  # below the closing line: the body
    assert value_path_at(frame("lane: sem"), 9) is None  # no frontmatter at all
    assert value_path_at(frame("---"), 3) is None


def test_a_list_item_at_the_key_s_own_indentation():
    text = "---\nsupersedes:\n- a\n- b\n---\n"
    assert at(text, "- b", 3) == ("supersedes", 1)
    assert at(text.replace("- b", "- b: ["), "- b", 2) == ("supersedes", 1)  # broken: tolerant


@pytest.mark.parametrize(
    "text",
    [
        "",
        "---\n",
        "---\n---\n",
        "\ufeff---\nlane: ",
        "---\n: x\n",
        "---\n- a\n---\n",
        "---\n  - : [\n",
        "---\nkey: {a: [1, {b: \n",
    ],
)
def test_any_text_and_any_offset_never_raise(text):
    doc = frame(text)
    for offset in range(-1, len(text) + 2):
        value_path_at(doc, offset)
