"""``memzoi rebuild [--json]``: recreate the workspace index from the git plane (SPEC §7, §8).

Progress goes to stderr (a live counter on a terminal); ``--json`` prints Memzoi's rebuild shape
``{records_root, db_path, record_ids}`` plus ``proposal_ids``, ``files_indexed``, ``refused`` and ``seconds``.
"""

from __future__ import annotations

import argparse
import sys
import time

from ..index import Index, IndexUnavailable
from ._changes import add_common, emit_json, require_project


class StderrProgress:
    """``(done, total)`` callback drawing ``memzoi <what>: indexing N/T files`` on stderr when it is a terminal
    (at most ten redraws a second); silent otherwise, so logs are not flooded."""

    def __init__(self, what: str):
        self.what = what
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
        sys.stderr.write(f"\rmemzoi {self.what}: indexing {done}/{total} files ({pct}%)")
        sys.stderr.flush()
        self.drawn = True

    def finish(self) -> None:
        """End the progress line."""
        if self.drawn:
            sys.stderr.write("\n")
            self.drawn = False


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``rebuild``."""
    p = sub.add_parser("rebuild", help="recreate the workspace index (records, proposals, full-text search) "
                       "from the .memzoi files")
    add_common(p, actor=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Rebuild; exit 0, or 1 when the index cannot be written."""
    root = require_project(args)
    if root is None:
        return 2
    progress = StderrProgress("rebuild")
    try:
        with Index(root) as index:
            result = index.rebuild(progress)
            db = index.path
    except IndexUnavailable as err:
        progress.finish()
        print(f"memzoi: {err}", file=sys.stderr)
        return 1
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
