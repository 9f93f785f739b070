"""After a write of the server's own: bring its view and the client's in line with the disk (issue 28, contract §1
and §2).

:func:`after_write` runs on the event loop once a change (lifecycle command, resident decision, materialization,
recovery) is on disk:

1. open documents of touched files whose buffer still holds the text from before are marked *behind*
   (:meth:`memzoi_lsp.documents.Documents.mark_behind`): until the client reloads them, the disk governs their
   diagnostics and cross-file facts, so no ``lifecycle_inconsistent`` or ``duplicate_content`` is judged from a
   stale buffer;
2. the touched files go through the watcher's pass at once (re-read, re-indexed, cross-file re-evaluated,
   deleted files' diagnostics cleared: an empty push for push clients, ``workspace/diagnostic/refresh`` for pull
   clients that support it);
3. ``memzoi/changed`` ``{"changeId", "operation", "message", "touched": [{"uri", "deleted"}]}`` tells the client
   which buffers to reload, and ``memzoi/inboxChanged`` ``{}`` follows when pending proposals or resident
   candidates changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from .documents import path_to_uri
from .notifications import CHANGED, INBOX_CHANGED, notify

if TYPE_CHECKING:
    from .session import CommandSession


def after_write(
    ls: CommandSession,
    touched: Iterable[Path],
    *,
    change_id: str | None,
    operation: str,
    message: str,
    inbox: bool = False,
    before: dict[Path, bytes | None] | None = None,
) -> None:
    """Re-read ``touched`` (absolute paths the server just wrote or deleted), mark stale open buffers, re-publish,
    and notify the client (see the module docstring). ``inbox``: pending proposals or resident candidates
    changed. ``before``: the bytes a file had before the change, when known: only a buffer holding exactly them is
    behind (a buffer with the user's own unsaved text stays the user's)."""
    paths = list(dict.fromkeys(Path(p) for p in touched))
    behind = []
    for path in paths:
        uri = path_to_uri(path)
        if not (ls.docs.is_open(uri) and path.is_file()):
            continue
        old = (before or {}).get(path, ...)
        if isinstance(old, bytes) and ls.workspace.get_text_document(uri).source != old.decode("utf-8", "replace"):
            continue
        ls.docs.mark_behind(uri)
        behind.append(uri)
    ls.files_changed(paths, immediate=True)
    for uri in behind:
        ls.publish(uri)
    ls.request_refresh()
    outcome = [(path_to_uri(p), not p.exists()) for p in paths]
    for uri, deleted in outcome:
        if deleted:
            ls.clear_diagnostics(uri)
    touched_json = [{"uri": uri, "deleted": deleted} for uri, deleted in outcome]
    notify(ls, CHANGED, {"changeId": change_id, "operation": operation, "message": message, "touched": touched_json})
    if (
        inbox
    ):  # pending proposals: the watcher's pass above notified (memzoi_lsp.inboxwatch.CandidateWatch.paths_changed)
        notify(ls, INBOX_CHANGED, {})


__all__ = ["CHANGED", "INBOX_CHANGED", "after_write", "notify"]
