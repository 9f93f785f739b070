"""The change engine's refusals before anything is recorded: secrets in texts and paths, files it may not write."""

from __future__ import annotations

from pathlib import Path

from ..base.fsutil import ReadOnlyTarget, check_creatable, check_writable
from ..judge.pathsafety import name_findings
from .model import ChangePlan, FileChange, Refusal
from .schema import holds_secret
from .store import safe_path


def refuse_secret_text(**texts: str | None) -> None:
    """Refuse (``secret_in_text``) when a free text the ledger would keep (actor, reason, summary) holds what a
    detector matches: the ledger never stores secrets."""
    for name, text in texts.items():
        if text and holds_secret(text):
            raise Refusal(
                "secret_in_text",
                f"the {name} holds what looks like a secret or personal data, and the "
                "ledger never stores those; rephrase it without the value and retry",
            )


def refuse_secret_paths(plan: ChangePlan) -> None:
    """Refuse a plan one of whose paths bears a secret (the ledger stores every path it touches), with the path
    finding's code (:func:`memzoi.judge.pathsafety.name_findings`)."""
    for p in (f.path for f in plan.files):
        named = name_findings(p)
        if named:
            raise Refusal(named[0].code, f"{p}: {named[0].message}; nothing was changed", p)


def purged_message(path: str) -> str:
    """Why a purged file state cannot be written back, and what to do."""
    return (
        f"{path}: this change purged the file's bytes on purpose because they held a secret or a non-repo-safe "
        "proposal (the ledger keeps only their hash and size), so undo cannot restore them; recreate the "
        "file from its source if it is still needed"
    )


def refuse_unwritable(root: Path, files: list[FileChange], *, forward: bool) -> None:
    """Refuse before anything is recorded when a file the change rewrites or removes cannot be written, or a
    file it creates cannot be created: memzoi keeps permissions and never writes a read-only file. The code and
    the advice follow the reason (:class:`~memzoi.base.fsio.ReadOnlyTarget`): ``read_only`` for a file without a
    write bit, ``read_only_file_system`` for a read-only mount, ``permission_denied`` for a file or folder this
    user may not write. Every such file is named at once (the code and path are the first one's), so one fix
    settles them all rather than one retry per file."""
    found: list[tuple[str, ReadOnlyTarget]] = []
    for f in files:
        src, dst = (f.before, f.after) if forward else (f.after, f.before)
        if src == dst:
            continue
        try:
            path = safe_path(root, f.path)
            check_writable(path) if src is not None else check_creatable(path)
        except ReadOnlyTarget as err:
            found.append((f.path, err))
    if len(found) == 1:
        raise unwritable_refusal(*found[0])
    if found:
        rel, first = found[0]
        named = "; ".join(f"{r}: the file is {e.strerror}" for r, e in found)
        advice = "; ".join(dict.fromkeys(e.advice for _, e in found))  # each piece of advice once, in order
        kept = all(e.reason == "mode" for _, e in found)
        raise Refusal(
            first.code,
            f"{named}. memzoi does not write these {len(found)} files and nothing was written; for each, {advice}; "
            "then retry" + (", or leave them as they are" if kept else ""),
            rel,
        )


def unwritable_refusal(rel: str, err: ReadOnlyTarget) -> Refusal:
    """The refusal for the file ``rel`` that :func:`~memzoi.base.fsio.check_writable` found unwritable: its code and
    advice follow the reason (a mode, a read-only mount, an owner, a folder)."""
    return Refusal(
        err.code,
        f"{rel}: the file is {err.strerror}, so memzoi does not write it and nothing was "
        f"written; {err.advice} and retry" + (", or leave it as it is" if err.reason == "mode" else ""),
        rel,
    )
