"""Server notifications of Memzoi's own (``memzoi/changed``, ``memzoi/inboxChanged``; contract of issue 28 §1), and
the client's code lens refresh, sent so that a closed transport or an ending session never fails the caller.
Imports no feature.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.capabilities import get_capability

if TYPE_CHECKING:
    from .session import CommandSession, Notifier

log = logging.getLogger("memzoi_lsp.changes")

CHANGED = "memzoi/changed"
INBOX_CHANGED = "memzoi/inboxChanged"


def notify(ls: Notifier, method: str, params: Any) -> None:
    """Send a server notification (``params``: a JSON object, or an lsprotocol type) unless the session is
    ending."""
    if ls.stopping:
        return
    try:
        ls.protocol.notify(method, params)
    except Exception as err:  # a closed transport must not fail the command whose change is on disk
        log.info("%s not sent: %s", method, type(err).__name__)


def refresh_lenses(ls: CommandSession) -> None:
    """Ask the client to ask for its code lenses again (``workspace/codeLens/refresh``), only when it says it can
    (``workspace.codeLens.refreshSupport``) and the session is not ending: after the server itself settled what
    lenses show (a start-up reconciliation), which no edit of the client's would make it ask for. The answer (or
    the client's error) is taken and dropped."""
    if ls.stopping or not get_capability(ls.client_capabilities, "workspace.code_lens.refresh_support", False):
        return
    try:
        asked = ls.protocol.send_request(types.WORKSPACE_CODE_LENS_REFRESH, None)
    except Exception as err:  # a closed transport: the lenses are asked for again as documents open
        log.info("%s not sent: %s", types.WORKSPACE_CODE_LENS_REFRESH, type(err).__name__)
        return
    asked.add_done_callback(lambda f: f.cancelled() or f.exception())
