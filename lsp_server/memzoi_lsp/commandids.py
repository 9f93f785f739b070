"""The identifiers of the commands (``workspace/executeCommand``) that more than one feature names: the lifecycle
commands (:mod:`.lifecycle`), the preview (:mod:`.preview`) and materialization (:mod:`.materialization`), which
code actions (:mod:`.actions`) and lenses (:mod:`.lenses`) offer. One table, so a feature that offers a command
needs no import of the feature that runs it (``tests/test_architecture.py``). The editor clients call the same
strings (editors/, vscode-extension/).
"""

from __future__ import annotations

APPLY = "memzoi.apply"
REJECT = "memzoi.reject"
ROUTE_LOCAL = "memzoi.routeLocal"
SUPERSEDE = "memzoi.supersede"
TOMBSTONE = "memzoi.tombstone"
UNDO = "memzoi.undo"
RECOVER = "memzoi.recover"
HISTORY = "memzoi.history"
RECONCILE = "memzoi.reconcile"
REATTEST = "memzoi.reattest"

PREVIEW = "memzoi.preview"

MATERIALIZE_PLAN = "memzoi.materialize.plan"
MATERIALIZE_DECIDE = "memzoi.materialize.decide"
MATERIALIZE = "memzoi.materialize"
