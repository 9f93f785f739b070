"""``memzoi rebuild [--json]``: drop the project store (:mod:`memzoi.stores.store`) and re-fill its workspace index and entries from
the git plane (SPEC §7, §8), one analysis per file (:func:`memzoi.stores.fileentry.make_entry`).

Progress goes to stderr on a terminal (:mod:`memzoi.cli.progress`, off with ``--no-progress``); ``--json`` prints Memzoi's rebuild shape
``{records_root, db_path, record_ids}`` plus ``proposal_ids``, ``files_indexed``, ``refused`` and ``seconds``. Paths are
shown as :func:`memzoi.judge.pathsafety.shown_local_path` shows them (``<redacted-path:HEX>`` where a folder name
bears a secret).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..base.printable import printable
from ._changes import add_common, emit_json, project_root
from ._common import add_command, refuse_linked_plane


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``rebuild``."""
    p = add_command(
        sub,
        "rebuild",
        help="recreate the workspace index (records, proposals, full-text search) from the .memzoi files",
        description="Recreate the disposable workspace index (SQLite, full-text search) in the runtime directory "
        "from the .memzoi files. Progress (files done, rate) is shown on stderr when it is a terminal and TERM is not "
        "dumb, never on stdout; --no-progress turns it off.",
        examples=["memzoi rebuild", "memzoi rebuild --json"],
        exits={1: "the index cannot be written, or a .memzoi, records or proposals folder is a symlink"},
    )
    add_common(p, actor=False)
    add_progress_option(p)
    # its summary is the last thing a rebuild does: its process need not free what it held (main.end_at_once)
    p.set_defaults(func=run, end_at_once=True)


def add_progress_option(p: argparse.ArgumentParser) -> None:
    """Add ``--no-progress`` (see :mod:`memzoi.cli.progress`)."""
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="never draw the progress line on stderr (it is drawn only when stderr is a terminal, TERM "
        "is not dumb and the run is long)",
    )


def damaged(db: Path) -> bool:
    """True when the SQLite database ``db`` exists and is damaged: it is not a database, or SQLite's
    ``PRAGMA quick_check`` finds it malformed (opened read-only; nothing is written)."""
    import sqlite3  # noqa: PLC0415 lazy: start-up

    from ..base.runtime_errors import damage  # noqa: PLC0415 lazy: start-up

    if not db.is_file():
        return False
    try:
        return damage(db) is not None
    except sqlite3.Error:  # locked or cannot be opened now: not known to be damaged
        return False


def discard_index(db: Path) -> None:
    """Remove the damaged index database ``db`` and its SQLite companions (``-wal``, ``-shm``, ``-journal``): the
    index is disposable, made again from the .memzoi files (SPEC §7). A file already gone is no error."""
    from ..base.runtime import DB_COMPANIONS  # noqa: PLC0415 lazy: start-up

    for p in (db, *(db.with_name(db.name + s) for s in DB_COMPANIONS)):
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass


def run(args: argparse.Namespace) -> int:
    """Rebuild; exit 0, or 1 when the index cannot be written (:class:`~memzoi.base.runtime_errors.RuntimeStateError`,
    reported by the dispatcher)."""
    from ..base.runtime_errors import guard  # noqa: PLC0415 lazy: start-up
    from ..stores.index import Index  # noqa: PLC0415 lazy: start-up

    root = project_root(args)
    refused = refuse_linked_plane(args, root)  # nothing is read through a symlinked .memzoi/records/proposals
    if refused is not None:
        return refused
    from ..base.runtime import project_runtime_dir, tighten_tree  # noqa: PLC0415 lazy: start-up
    from ..base.runtime_errors import RuntimeStateError  # noqa: PLC0415 lazy: start-up
    from ..judge.pathsafety import shown_local_path  # noqa: PLC0415 lazy: start-up
    from ..stores.store import store_path  # noqa: PLC0415 lazy: start-up
    from .progress import Progress  # noqa: PLC0415 lazy: start-up

    tighten_tree(project_runtime_dir(root))  # runtime state others may read becomes private (doctor's advice)
    progress = Progress("rebuild", "indexing", enabled=None if not args.no_progress else False)
    try:
        # A full or read-only index raises RuntimeStateError (IndexUnavailable is one), which the dispatcher
        # prints as one line, or as {"error": …} with --json. A damaged one is disposable: removed and made anew.
        for attempt in (1, 2):
            try:
                with Index(root) as index, guard(index.path, "index"):
                    # drop the whole store and re-fill it; the index is closed right after
                    result = index.rebuild(progress, everything=True, closing=True)
                    db = index.path
                break
            except RuntimeStateError as err:
                db = store_path(root)
                if err.code != "corrupt_database" or attempt == 2 or not damaged(db):
                    raise  # another database (the ledger) is never removed
                discard_index(db)
    finally:
        progress.finish()
    if args.json:
        emit_json(
            {
                "records_root": shown_local_path(root / ".memzoi" / "records"),
                "db_path": shown_local_path(db),
                "record_ids": result.record_ids,
                "proposal_ids": result.proposal_ids,
                "files_indexed": result.files,
                "refused": result.refused,
                "seconds": round(result.seconds, 3),
            }
        )
    else:
        print(
            f"indexed {result.files} file(s): {len(result.record_ids)} record(s), {len(result.proposal_ids)} "
            f"proposal(s), {len(result.refused)} refused admission, in {result.seconds:.2f} s"
        )
        print(printable(f"index: {shown_local_path(db)}"))
        for r in result.refused[:10]:
            print(printable(f"  refused {r['path']}: {', '.join(r['refusals'])} (see `memzoi check`)"))
    return 0
