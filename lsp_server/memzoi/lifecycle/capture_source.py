"""The source and the extractor of ``memzoi capture plan`` with Memzoi's ``markdown-deterministic`` profile
(Memzoi's reference page "Deterministic Markdown profile"; ``crates/memzoi-core/src/capture.rs``).

**Source.** Exactly one regular UTF-8 ``.md`` file named by a POSIX project-relative path (``--source P``, or a
``memzoi/capture-request`` with one ``project_path`` source). Absolute paths, ``.``/``..`` components, backslashes,
a ``.memzoi`` component, symbolic links, other extensions and files over 1 MiB are refused (``invalid_capture_source``);
capture never searches for other inputs. Non-UTF-8 bytes and NUL bytes are Memzoi's block codes
``unsupported_utf8_content`` and ``unsupported_binary_content``.

**Extractor** (``id: memzoi-markdown``, version ``1.0.0``). ATX headings outside fenced code blocks; a heading
prefix types the section that follows it (up to the next heading):

=================  ==============================  ============================
prefix             type, lane                      destination, sensitivity
=================  ==============================  ============================
``Fact:``          fact, semantic                  repo, repo-safe
``Decision:``      decision, semantic              repo, repo-safe
``Procedure:``     procedure, procedural           repo, repo-safe
``Warning:``       warning, semantic               repo, repo-safe
``Failed attempt:`` failed_attempt, episodic       repo, repo-safe
``Risk:``          risk, semantic                  repo, repo-safe
``Preference:``    preference, semantic            local, local-only
``Episode:``       episode, session                session, temporary-state
=================  ==============================  ============================

Nonempty preamble text and untyped sections give ``unsupported_markdown_content`` diagnostics (source id and
starting line). A document without any typed heading gives one ``needs_review`` candidate with unknown
sensitivity rather than being routed.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import blake3

from ..ledger import Refusal

PROFILE = "markdown-deterministic"
EXTRACTOR = {"kind": "deterministic", "id": "memzoi-markdown", "version": "1.0.0"}
MAX_SOURCE_BYTES = 1024 * 1024
MAX_CANDIDATES = 100
MAX_HEADINGS = 4096
MAX_EVIDENCE_ITEM = 16 * 1024
PREFIXES = {
    "Fact:": ("fact", "semantic", "repo", "repo-safe"),
    "Decision:": ("decision", "semantic", "repo", "repo-safe"),
    "Procedure:": ("procedure", "procedural", "repo", "repo-safe"),
    "Warning:": ("warning", "semantic", "repo", "repo-safe"),
    "Failed attempt:": ("failed_attempt", "episodic", "repo", "repo-safe"),
    "Risk:": ("risk", "semantic", "repo", "repo-safe"),
    "Preference:": ("preference", "semantic", "local", "local-only"),
    "Episode:": ("episode", "session", "session", "temporary-state"),
}
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
CODE = "invalid_capture_source"


def digest(data: bytes | str) -> str:
    """``blake3:<64 lowercase hex>`` of ``data`` (UTF-8 for text)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return "blake3:" + blake3.blake3(raw).hexdigest()


def canonical_hash(value: Any) -> str:
    """BLAKE3 hex of ``value`` as canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return blake3.blake3(text.encode("utf-8")).hexdigest()


CONFIGURATION_HASH = digest(json.dumps({"profile": PROFILE, "prefixes": PREFIXES}, sort_keys=True))


@dataclass(frozen=True)
class Source:
    """The loaded source: its ``source_id``, project-relative ``path`` and raw bytes."""

    source_id: str
    path: str
    data: bytes

    def snapshot(self) -> dict[str, Any]:
        """Memzoi's ``CaptureSourceSnapshot`` of the source."""
        return {
            "source_id": self.source_id,
            "locator": {"kind": "project_path", "path": self.path},
            "media_type": "text/markdown",
            "byte_length": len(self.data),
            "source_content_hash": digest(self.data),
        }


def _fail(what: str) -> Refusal:
    return Refusal(CODE, f"{what}; nothing was written. Capture reads exactly one project-relative `.md` file")


def valid_source_id(value: str) -> bool:
    """Memzoi's source id: 1-64 characters of ``a-z 0-9 . _ -`` starting with a letter or digit."""
    return bool(re.fullmatch(r"[a-z0-9][a-z0-9._-]{0,63}", value))


def load_source(root: Path, path: str, source_id: str | None = None) -> Source:
    """Read the source ``path`` (module docstring) under ``root``. Raises :class:`Refusal`
    (``invalid_capture_source``) naming the path and the rule."""
    rel = path.strip()
    if not rel or rel.startswith("/") or "\\" in rel or (len(rel) > 1 and rel[1] == ":"):
        raise _fail(f"capture source `{rel}` must be a POSIX project-relative path")
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts) or ".memzoi" in parts:
        raise _fail(f"capture source `{rel}` must not contain `.`, `..`, empty or `.memzoi` components")
    if not rel.endswith(".md"):
        raise _fail(f"capture source `{rel}` is not a Markdown (`.md`) file")
    sid = source_id if source_id is not None else re.sub(r"[^a-z0-9._-]+", "-", Path(rel).stem.lower()).strip("-.")
    if not valid_source_id(sid or ""):
        raise _fail("--source-id must be 1-64 characters of a-z, 0-9, `.`, `_` or `-`")
    target = root
    for part in parts:
        target = target / part
        try:
            st = os.lstat(target)
        except FileNotFoundError:
            raise _fail(f"capture source `{rel}` does not exist") from None
        if stat.S_ISLNK(st.st_mode):
            raise _fail(f"capture source `{rel}` goes through a symbolic link")
    if not stat.S_ISREG(st.st_mode):
        raise _fail(f"capture source `{rel}` is not a regular file")
    if st.st_size > MAX_SOURCE_BYTES:
        raise _fail(f"capture source `{rel}` is larger than 1 MiB")
    with open(target, "rb") as fh:
        data = fh.read(MAX_SOURCE_BYTES + 1)
    if len(data) > MAX_SOURCE_BYTES:
        raise _fail(f"capture source `{rel}` is larger than 1 MiB")
    return Source(sid, rel, data)


@dataclass(frozen=True)
class Section:
    """A typed (``prefix`` set) or untyped section: heading title, body text and spans (byte offsets into the
    source, 1-based lines)."""

    prefix: str | None
    title: str
    heading_path: list[str]
    body: str
    byte_start: int
    byte_end: int
    line_start: int
    line_end: int


def sections(text: str) -> tuple[list[Section], list[dict[str, Any]]]:
    """The sections of ``text`` and the ``unsupported_markdown_content`` diagnostics (preamble and untyped
    sections with nonempty text). Raises :class:`Refusal` ``capture_limit_exceeded`` above 4,096 headings."""
    lines = text.splitlines(keepends=True)
    offsets, pos = [], 0
    for line in lines:
        offsets.append(pos)
        pos += len(line.encode("utf-8"))
    heads: list[tuple[int, int, str]] = []  # (line index, level, heading text)
    fence = None
    for i, line in enumerate(lines):
        m = _FENCE.match(line)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark[0] * 3
            elif mark.startswith(fence):
                fence = None
            continue
        if fence is None and (h := _ATX.match(line.rstrip("\r\n"))):
            heads.append((i, len(h.group(1)), (h.group(2) or "").strip()))
    if len(heads) > MAX_HEADINGS:
        raise Refusal("capture_limit_exceeded", "the source has more than 4,096 headings; nothing was written")
    out: list[Section] = []
    diags: list[dict[str, Any]] = []
    if lines[: heads[0][0] if heads else len(lines)] and "".join(lines[: heads[0][0] if heads else len(lines)]).strip():
        diags.append({"code": "unsupported_markdown_content", "line": 1})
    stack: list[tuple[int, str]] = []
    for n, (i, level, head) in enumerate(heads):
        end = heads[n + 1][0] if n + 1 < len(heads) else len(lines)
        body = "".join(lines[i + 1 : end]).strip()
        stack = [s for s in stack if s[0] < level] + [(level, head)]
        prefix = next((p for p in PREFIXES if head.startswith(p)), None)
        title = head[len(prefix) :].strip() if prefix else head
        if prefix is None and body:
            diags.append({"code": "unsupported_markdown_content", "line": i + 1})
        out.append(
            Section(
                prefix,
                title,
                [s[1] for s in stack],
                body,
                offsets[i],
                offsets[end - 1] + len(lines[end - 1].encode("utf-8")) if end > i else offsets[i],
                i + 1,
                end,
            )
        )
    return out, diags
