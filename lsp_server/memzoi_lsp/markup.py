"""Markdown for hovers and messages built from file text: escaping with as few backslashes as can be, code spans,
links limited to ``http``/``https``/``file`` targets, and the plaintext form for clients that ask for it. A
detected secret is never shown (:func:`memzoi.safety.redact.scrub`). Used by the hover feature and the resident
feature alike; imports no feature.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote, urlsplit

# Only what would otherwise start markup, HTML or a link, and only where it would (issue 28: Neovim's and Emacs'
# floats show every backslash, so `https\://`, `500 -\> 300` or `\[chg_…\]` were noise): a backslash before
# punctuation, a code span's backtick, an asterisk, `~~`, an underscore at a word boundary, `<` before a tag,
# comment or autolink, `&` starting an entity, and `]` before `(` (what makes `[text](target)` a link; a hover
# defines no link references, so a lone `[x]` stays text). A bare http(s) URL may become a web link in a client that
# linkifies (never a `command:` link: no client autolinks other schemes).
_MD_SPECIAL = re.compile(
    r"\\(?=[!-/:-@\[-`{-~])|[`*]|~(?=~)|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])|<(?=[A-Za-z/!?])"
    r"|&(?=#[0-9]+;|#[xX][0-9A-Fa-f]+;|[A-Za-z][A-Za-z0-9]*;)|\](?=\()"
)
# A value at the start of a line could open a block (heading, list, quote, thematic break).
_BLOCK_START = re.compile(r"^(\s*)([#+\-=>])|^(\s*\d+)([.)])")


def esc(value: Any) -> str:
    """Escape ``value`` for Markdown with as few backslashes as can be (see :data:`_MD_SPECIAL`) and a block marker
    at the start; line breaks become spaces. Prefer :func:`code` for identifiers, codes and timestamps: a code span
    needs no escape at all."""
    from memzoi.safety.redact import scrub  # noqa: PLC0415 lazy: start-up

    text = scrub("" if value is None else str(value))  # a detected secret is never shown
    text = re.sub(r"[\r\n\u2028\u2029]+", " ", text)
    text = _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), text)
    return _BLOCK_START.sub(
        lambda m: (m.group(1) or m.group(3) or "") + "\\" + (m.group(2) or m.group(4)), text, count=1
    )


_CODE_SPAN = re.compile(r"`([^`]*)`")
_LINK = re.compile(r"(?<!\\)\[((?:\\.|[^\]\\])*)\]\(([^)\s]*)\)")


def to_plaintext(markdown: str) -> str:
    """The hover text for a client that asked for plaintext: the markup this module builds (code spans, links,
    strong and emphasis, backslash escapes) removed, its text kept."""
    spans: list[str] = []

    def keep(m: re.Match[str]) -> str:
        spans.append(m.group(1))
        return f"\x00{len(spans) - 1}\x00"

    text = _CODE_SPAN.sub(keep, markdown)
    text = _LINK.sub(lambda m: f"{m.group(1)} <{m.group(2)}>" if m.group(1) != m.group(2) else m.group(2), text)
    text = re.sub(r"(?<!\\)\*\*", "", text)
    text = re.sub(r"(?<![\w\\])_(\S(?:.*?\S)?)_(?!\w)", r"\1", text)
    text = re.sub(r"\\(.)", r"\1", text)
    return re.sub("\x00(\\d+)\x00", lambda m: spans[int(m.group(1))], text)


def code(value: Any) -> str:
    """Inline code for a short value (backticks inside are replaced, so the span cannot be broken out of); a value
    that is absent (``None``) or blank is spelt ``(none)`` or ``(empty)`` in emphasis, never as an empty span (a
    client shows that as its raw backticks, or as an invisible character standing for nothing)."""
    from memzoi.safety.redact import scrub  # noqa: PLC0415 lazy: start-up

    if value is None:
        return "_(none)_"
    text = re.sub(r"[\r\n]+", " ", scrub(str(value))).replace("`", "'")
    return f"`{text}`" if text.strip() else "_(empty)_"


def link(label: str, target: str) -> str:
    """A Markdown link whose target is an ``http``/``https``/``file`` URL (anything else gives the plain escaped
    label). Parentheses and spaces in the target are percent-encoded."""
    from memzoi.safety.redact import scrub  # noqa: PLC0415 lazy: start-up

    parts = urlsplit(target)
    if parts.scheme not in ("http", "https", "file") or scrub(target) != target:  # never link to a secret
        return esc(label)
    safe = quote(target, safe=":/?#[]@!$&'*+,;=%~-._")
    safe = safe.replace("(", "%28").replace(")", "%29")
    return f"[{esc(label)}]({safe})"
