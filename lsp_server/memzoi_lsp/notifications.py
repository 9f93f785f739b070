"""Server notifications of Memzoi's own (``memzoi/changed``, ``memzoi/inboxChanged``; contract of issue 28 §1),
sent so that a closed transport or an ending session never fails the caller. Imports no feature.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .session import Notifier

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
