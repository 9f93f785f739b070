"""What one answer to an agent shows of a memory: nothing of a memory that is not usable (:func:`withheld`), and
no text longer than :data:`BODY_CAP` (:func:`cut`). The rule that says what is usable is
:meth:`memzoi.agent.recall.Reader.usable`; this module only shapes the answer.

The cap is why no tool result can be tens of MB: a record over Memzoi's limit for a file
(:data:`memzoi.judge.analysis.MAX_FILE_BYTES`, 512 KiB) is refused and so withheld whole, and what is returned of
any other text stops at 256 KiB of UTF-8, each of the structured copy and the readable text.
"""

from __future__ import annotations

from typing import Any

#: The most UTF-8 bytes of one title or text a result carries (half of Memzoi's 512 KiB limit for a field: an
#: agent's context is not the place for more; the file holds the rest).
BODY_CAP = 256 * 1024


#: The code of a record in an old Memzoi profile: ``memzoi check`` only warns, but current Memzoi refuses the file
#: ("current-schema-only"), so no answer hands it out as memory; ``memzoi upgrade`` rewrites it.
LEGACY = "legacy_profile"


def upgrade_hint(reasons: list[str], path: str = "PATH") -> str:
    """What to do about a withheld legacy record (``upgrade it: memzoi upgrade PATH --write``), or ``""`` when
    ``LEGACY`` is not among ``reasons``."""
    return f"upgrade it: `memzoi upgrade {path} --write`" if LEGACY in reasons else ""


def withheld(codes: list[str]) -> str:
    """What stands for a withheld text: ``[withheld: <codes>]``."""
    return f"[withheld: {', '.join(codes)}]"


def withheld_line(items: list[dict[str, Any]]) -> list[str]:
    """The readable line naming what an answer left out as not usable memory (``{"id", "reasons"}`` each, as
    :meth:`memzoi.agent.recall.Reader.usable` lists them; never their text), or no line when nothing was."""
    if not items:
        return []
    named = "; ".join(f"{w['id']} ({', '.join(w['reasons'])})" for w in items)
    legacy = [w["id"] for w in items if LEGACY in w["reasons"]]
    hint = (
        f" In an old Memzoi profile, which current Memzoi refuses ({', '.join(legacy)}): {upgrade_hint([LEGACY])}."
        if legacy
        else ""
    )
    return [f"Withheld, not usable memory (`memzoi check` refuses it now; see `memzoi check PATH`): {named}.{hint}"]


def cut(text: str, cap: int = BODY_CAP) -> tuple[str, int | None]:
    """``text`` cut to at most ``cap`` bytes of UTF-8 on a character boundary, and its full size in bytes when it
    was cut (``None`` when it was not). A lone surrogate counts as its three escaped bytes."""
    if len(text) * 4 <= cap:  # the usual case: short enough whatever its characters
        return text, None
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= cap:
        return text, None
    end = cap
    while end > 0 and raw[end] & 0xC0 == 0x80:  # raw[end] continues a character begun before the cut: drop it
        end -= 1
    return raw[:end].decode("utf-8", "surrogatepass"), len(raw)


def shown_memory(found: dict[str, Any], *, include_unsafe: bool = False) -> dict[str, Any]:
    """A memory of :func:`memzoi.agent.recall.get_memory` as an answer shows it. ``reasons`` (defaulting to its
    ``unsafe`` codes) says why it is not usable memory; with reasons, its title and text are withheld
    (``withheld: true``: each is :func:`withheld` of the reasons, no text at all) unless ``include_unsafe``, which
    returns them still marked by ``reasons`` (as redacted as the index holds them). A title or text returned is
    cut at :data:`BODY_CAP`; a cut text adds ``truncated: true``, ``body_bytes`` (its full size) and ``rest`` (where
    to read it whole)."""
    reasons = found.setdefault("reasons", list(found.get("unsafe") or []))
    if reasons and not include_unsafe:
        return {**found, "title": withheld(reasons), "body": withheld(reasons), "withheld": True}
    title, _ = cut(found.get("title") or "")
    body, size = cut(found.get("body") or "")
    out = {**found, "title": title, "body": body}
    if size is not None:
        where = f"the file {found['path']}" if found.get("path") else "the memory where it is stored"
        out.update(truncated=True, body_bytes=size, rest=f"the text is cut at {BODY_CAP} bytes of {size}: read {where}")
    return out
