"""``memzoi rebuild [--json]``: recreate the workspace index from the git plane (SPEC §7, §8).

Progress goes to stderr (a live counter on a terminal); ``--json`` prints Memzoi's rebuild shape
``{records_root, db_path, record_ids}`` plus ``proposal_ids``, ``files_indexed``, ``refused`` and ``seconds``.
"""

from __future__ import annotations

import argparse
import sys
import time

from ._common import add_command, refuse_linked_plane
from ._changes import add_common, emit_json, project_root


class StderrProgress:
    """``(done, total)`` callback drawing ``memzoi <what>: <verb> N/T files`` on stderr when it is a terminal
    (at most ten redraws a second); silent otherwise, so logs and machine formats are never mixed with it.
    ``erase``: :meth:`finish` clears the line instead of ending it."""

    def __init__(self, what: str, verb: str = "indexing", *, erase: bool = False):
        self.what = what
        self.verb = verb
        self.erase = erase
        self.tty = sys.stderr.isatty()
        self.last = 0.0
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.tty:
            return
        now = time.monotonic()
        if done < total and now - self.last < 0.1:
            return
        self.last = now
        pct = 100 * done // total if total else 100
        sys.stderr.write(f"\rmemzoi {self.what}: {self.verb} {done}/{total} files ({pct}%)")
        sys.stderr.flush()
        self.drawn = True

    def finish(self) -> None:
        """End (or with ``erase``, clear) the progress line."""
        if self.drawn:
            sys.stderr.write("\r\x1b[K" if self.erase else "\n")
            self.drawn = False


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``rebuild``."""
    p = add_command(
        sub, "rebuild", help="recreate the workspace index (records, proposals, full-text search) from the .memzoi "
        "files",
        description="Recreate the disposable workspace index (SQLite, full-text search) in the runtime directory "
        "from the .memzoi files. Progress is shown on a terminal.",
        examples=["memzoi rebuild", "memzoi rebuild --json"],
        exits={1: "the index cannot be written, or a .memzoi, records or proposals folder is a symlink"})
    add_common(p, actor=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Rebuild; exit 0, or 1 when the index cannot be written (:class:`~memzoi.runtime_errors.RuntimeStateError`,
    reported by the dispatcher)."""
    from ..index import Index
    from ..runtime_errors import guard

    root = project_root(args)
    refused = refuse_linked_plane(args, root)  # nothing is read through a symlinked .memzoi/records/proposals
    if refused is not None:
        return refused
    progress = StderrProgress("rebuild")
    try:
        # A full, read-only or damaged index raises RuntimeStateError (IndexUnavailable is one), which the
        # dispatcher prints as one line, or as {"error": …} with --json.
        with Index(root) as index, guard(index.path, "index"):
            result = index.rebuild(progress)
            db = index.path
    finally:
        progress.finish()
    if args.json:
        emit_json({
            "records_root": str(root / ".memzoi" / "records"),
            "db_path": str(db),
            "record_ids": result.record_ids,
            "proposal_ids": result.proposal_ids,
            "files_indexed": result.files,
            "refused": result.refused,
            "seconds": round(result.seconds, 3),
        })
    else:
        print(f"indexed {result.files} file(s): {len(result.record_ids)} record(s), {len(result.proposal_ids)} "
              f"proposal(s), {len(result.refused)} refused admission, in {result.seconds:.2f} s")
        print(f"index: {db}")
        for r in result.refused[:10]:
            print(f"  refused {r['path']}: {', '.join(r['refusals'])} (see `memzoi check`)")
    return 0
