"""The owned transcript of one delivered turn, as a reflection review receives it (reference ``zuno-memory.md``
§6 "Scheduling after a turn", and the negative-learning gates of §4; Zuno ``zuno-agent/src/reflection/
policy.rs`` @2129c5c).

The file is JSON Lines, UTF-8, one object per line, from the turn's last user message to the delivered
assistant message (blank lines are skipped)::

    {"role": "user", "text": "Please run the linter before pushing."}
    {"role": "command", "command": "make lint", "status": "error", "output": "E501 line too long"}
    {"role": "command", "command": "make lint", "status": "completed", "output": ""}
    {"role": "tool", "tool": "read_file", "input": {"path": "Makefile"}, "status": "completed"}
    {"role": "assistant", "id": "msg_0042", "text": "Fixed; lint passes now."}

``role`` is ``user``, ``assistant``, ``command`` (a shell command: ``command``, ``status`` ``completed`` or
``error``, ``output``) or ``tool`` (another tool: ``tool``, ``input``, ``status``). The **last** item must be the
delivered ``assistant`` message with its ``id`` (the source message of the review); ``"interrupted": true`` on it
marks a turn that was not delivered whole, which is never reviewed. Every text is screened for secrets when read
(:func:`memzoi.safety.redact.scrub`): what is sent to the model and recorded is the screened text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..ledger import Refusal

ROLES = ("user", "assistant", "command", "tool")
STATUSES = ("completed", "error")
#: Zuno ``NEGATIVE_LEARNING_LIST``: what the reviewer must not capture (policy.rs @2129c5c).
NEGATIVE_LEARNING_LIST = (
    "environment-dependent failures (missing binaries, unconfigured credentials, fresh installs)",
    "negative claims about tools or features",
    "session-specific transient errors that resolved",
    "one-off task narratives",
    "unresolved failures written up as workflows",
)
_FAILURE_MARKERS = (
    "command not found",
    "no such file or directory",
    "missing binary",
    "unconfigured credential",
    "credentials not configured",
    "not installed",
    "package is not installed",
    "fresh install",
)
_BROKEN = ("is broken", "does not work", "do not work")
_ONE_OFF = ("summarize today's", "summarise today's", "analyze this pr", "analyse this pr")
#: Longest text kept per item (characters); longer texts are cut and say so.
MAX_TEXT = 20_000


@dataclass
class Item:
    """One transcript item (see the module docstring); ``text`` is the message text or the command's output."""

    role: str
    text: str = ""
    id: str | None = None
    command: str | None = None
    tool: str | None = None
    input: str | None = None
    status: str | None = None
    interrupted: bool = False

    def to_json(self) -> dict[str, Any]:
        """The item as it is recorded in the request (absent fields left out)."""
        out: dict[str, Any] = {"role": self.role}
        for key in ("id", "command", "tool", "input", "status"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        out["output" if self.role in ("command", "tool") else "text"] = self.text
        return out


@dataclass
class Transcript:
    """A parsed transcript: its items and the delivered message (the last item)."""

    items: list[Item] = field(default_factory=list)

    @property
    def message_id(self) -> str:
        """The delivered assistant message's id."""
        return self.items[-1].id or ""

    @property
    def interrupted(self) -> bool:
        """Whether the delivered message was interrupted (never reviewed)."""
        return self.items[-1].interrupted


def _screen(text: Any) -> str:
    from ..safety.redact import scrub  # noqa: PLC0415 lazy: start-up

    value = text if isinstance(text, str) else "" if text is None else json.dumps(text, ensure_ascii=False)
    if len(value) > MAX_TEXT:
        value = value[:MAX_TEXT] + f"\n[… {len(value) - MAX_TEXT:,} characters cut]"
    return scrub(value)


def _item(obj: Any, where: str) -> Item:
    if not isinstance(obj, dict):
        raise Refusal("invalid_transcript", f"{where}: each line must be a JSON object")
    role = obj.get("role")
    if role not in ROLES:
        raise Refusal("invalid_transcript", f"{where}: `role` must be one of {', '.join(ROLES)}")
    status = obj.get("status")
    if role in ("command", "tool") and status not in STATUSES:
        raise Refusal("invalid_transcript", f"{where}: a {role} item needs `status` completed or error")
    if role == "command" and not isinstance(obj.get("command"), str):
        raise Refusal("invalid_transcript", f"{where}: a command item needs `command` (a string)")
    if role == "tool" and not isinstance(obj.get("tool"), str):
        raise Refusal("invalid_transcript", f"{where}: a tool item needs `tool` (its name)")
    ident = obj.get("id")
    if ident is not None and not isinstance(ident, str):
        raise Refusal("invalid_transcript", f"{where}: `id` must be a string")
    body = obj.get("output") if role in ("command", "tool") else obj.get("text")
    return Item(
        role,
        _screen(body),
        ident,
        _screen(obj["command"]) if role == "command" else None,
        obj.get("tool") if role == "tool" else None,
        _screen(obj.get("input")) if role == "tool" and obj.get("input") is not None else None,
        status,
        bool(obj.get("interrupted", False)),
    )


def parse_transcript(text: str, where: str = "transcript") -> Transcript:
    """Parse transcript JSONL ``text`` (``where`` names it in messages). Raises :class:`Refusal`
    ``invalid_transcript`` naming the line and what to fix: not JSON, an unknown role or status, or a last item
    that is not an ``assistant`` message with an ``id``."""
    items = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            raise Refusal(
                "invalid_transcript",
                f"{where}:{number}: not a JSON object; write one JSON object per "
                "line (docs/resident-memory.md, 'The transcript')",
            ) from None
        items.append(_item(obj, f"{where}:{number}"))
    if not items or items[-1].role != "assistant" or not (items[-1].id or "").strip():
        raise Refusal(
            "invalid_transcript",
            f"{where}: the last line must be the delivered assistant message with "
            "its `id` (the message the review is about)",
        )
    return Transcript(items)


def read_transcript(path: str | Path) -> Transcript:
    """Read and parse the transcript file ``path`` (:func:`parse_transcript`). Raises :class:`Refusal`
    ``invalid_transcript`` when it cannot be read as UTF-8."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise Refusal(
            "invalid_transcript",
            f"{path}: cannot read the transcript ({type(err).__name__}); give a UTF-8 JSON Lines file",
        ) from None
    return parse_transcript(text, str(path))


def _commands(t: Transcript) -> list[Item]:
    return [i for i in t.items if i.role == "command"]


def negative_learning(t: Transcript) -> str | None:
    """Why ``t`` is a negative-learning turn that is never reviewed, or ``None`` (Zuno ``policy.rs`` gates, matched
    case-insensitively): a failed command with an environment marker in its output; user or assistant text naming
    a tool or feature with "is broken"/"does not work"; a command that fails and is at once retried successfully;
    a one-off request ("summarize today's", "analyze this PR"); a command whose last outcome was a failure."""
    cmds = _commands(t)
    for c in cmds:
        if c.status == "error" and any(m in c.text.lower() for m in _FAILURE_MARKERS):
            return "a command failed for an environment reason"
    for i in t.items:
        low = i.text.lower()
        if i.role in ("user", "assistant") and ("tool" in low or "feature" in low) and any(b in low for b in _BROKEN):
            return "a negative claim about a tool or feature"
        if i.role == "user" and any(o in low for o in _ONE_OFF):
            return "a one-off task"
    for a, b in zip(cmds, cmds[1:]):
        if a.status == "error" and b.status == "completed" and a.command == b.command:
            return "a transient error that resolved on retry"
    last: dict[str, str] = {}
    for c in cmds:
        last[c.command or ""] = c.status or ""
    if "error" in last.values():
        return "an unresolved failure"
    return None


def recovered(t: Transcript) -> bool:
    """Whether a command failed earlier in the turn and later succeeded (Zuno's "recovery")."""
    failed: set[str] = set()
    for c in _commands(t):
        if c.status == "error":
            failed.add(c.command or "")
        elif c.command in failed:
            return True
    return False
