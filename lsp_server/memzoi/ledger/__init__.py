"""The change ledger: at-most-once apply and undo of git-plane file changes (SPEC §6, Zuno discipline).

Every lifecycle write (apply, reject, supersede, tombstone, route-local, materialize, re-attest, recovery) is one
**change**: a row in the SQLite ledger of the runtime directory with actor, source (``editor``/``cli``/``mcp``), reason,
timestamps, a status and a diagnostic text, plus, per file, the exact before and after bytes (``NULL`` = absent),
or only their BLAKE3 digest and size (:class:`Purged`) when they held a secret or the change purges them on purpose
(a packet rejected into a hash receipt): such a change cannot be undone (``purged_secret``).

A change runs under the repository lifecycle lock (:mod:`memzoi.base.lock`):

1. the operation validates everything and computes every file's before and after bytes (:class:`ChangePlan`); a
   read-only file (``read_only``, every one named) or a secret in the actor or reason (``secret_in_text``) refuses
   it here (:mod:`.guards`);
2. the change is recorded durably as ``applying`` with all snapshots and each present file's permission bits (one
   ``BEGIN IMMEDIATE`` transaction); a file the change creates gets the bits its plan gives (a moved packet's), a
   file undo or recovery re-creates the bits it had, a folder it creates those of the folder above it
   (:mod:`memzoi.base.newfolders`), so no permission is widened; the folders it creates are recorded too, and
   removed again while empty once its files are back at their before bytes (:mod:`.folders`);
3. every file is checked against its before snapshot, then switched, created and rewritten files first and deletions
   last (:func:`~.model.in_write_order`, for apply, undo and recovery alike: the content is on disk at every point
   of a crash), by :func:`memzoi.base.fsutil.swap_file`, which
   compares the displaced bytes at the moment of the switch: an edit made meanwhile refuses the change
   (``external_drift``; files already written are put back) and is never lost; an I/O error rolls the change back
   where the disk allows (``write_failed``), and a failing ledger write refuses with the runtime error's code
   (``disk_full``, ``read_only_file_system``, ``permission_denied``, ``io_error``, ``corrupt_database``, else
   ``ledger_unavailable``: :mod:`memzoi.base.runtime_errors`), naming the database;
4. the change is recorded ``applied``.

Modules: :mod:`.model` (values), :mod:`.schema` (tables, migrations, stored states), :mod:`.store` (the
database and path helpers), :mod:`.writer` (run and undo), :mod:`.guards` (refusals before recording),
:mod:`.folders` (the folders a change creates), :mod:`.reconcile`, :mod:`.recovery`, :mod:`.history`, :mod:`.view`
(cached per-file facts), :mod:`.checkout`
(whose ledger it is), :mod:`.adopt` (bringing this checkout's ledger over from another runtime folder).

Undo swaps the snapshots (``undoing`` → ``undone``) and is allowed only while every file equals its after bytes.
Reconciliation (:func:`reconcile`, run before every change, by ``memzoi reconcile`` and as the language server
starts on a project: :func:`reconcile_at_start`) classifies in-flight changes left by a dead process by comparing the files with the snapshots (Zuno ``MemoryService::reconcile``):

=============  ==================  ============
in flight      files equal         new status
=============  ==================  ============
``applying``   all after           ``applied``
``applying``   all before          ``failed``
``undoing``    all before          ``undone``
``undoing``    all after           ``applied``
either         anything else       ``uncertain``
=============  ==================  ============

Nothing is ever replayed. An ``uncertain`` change is settled only by an explicit, itself ledgered, recovery
(:func:`recover`: restore before, complete after, or accept the files as they are).

Layer 3 of the core (ledger): The change ledger: every git-plane write as one ledgered change, history, undo,
recovery and reconciliation.

May import: base, read, judge, models, safety, ledger.
"""

from .history import (
    HistoryRead,
    checked_history,
    file_history,
    file_ledger_state,
    get_change,
    history,
    ledger_findings,
    undo_available,
)
from .model import (
    RECONCILED,
    RECOVERY_MODES,
    SOURCES,
    STATUSES,
    ChangePlan,
    ChangeRecord,
    ChangeResult,
    FileChange,
    Purged,
    Reconciled,
    Refusal,
)
from .previewed import fingerprint as preview_fingerprint
from .reconcile import reconcile, reconcile_at_start
from .recovery import recover
from .store import Ledger, cached_runtime_dir, file_mode, now_utc, read_file_state, safe_path, set_fault_hook
from .view import FileLedger, LedgerView
from .writer import dry_run, run_change, set_commit_hook, undo_change

__all__ = [
    "RECONCILED",
    "RECOVERY_MODES",
    "SOURCES",
    "STATUSES",
    "ChangePlan",
    "ChangeRecord",
    "ChangeResult",
    "dry_run",
    "preview_fingerprint",
    "FileChange",
    "FileLedger",
    "HistoryRead",
    "Ledger",
    "LedgerView",
    "Purged",
    "Reconciled",
    "Refusal",
    "cached_runtime_dir",
    "checked_history",
    "file_ledger_state",
    "file_mode",
    "get_change",
    "file_history",
    "history",
    "ledger_findings",
    "now_utc",
    "read_file_state",
    "reconcile",
    "reconcile_at_start",
    "recover",
    "run_change",
    "safe_path",
    "set_commit_hook",
    "set_fault_hook",
    "undo_available",
    "undo_change",
]
