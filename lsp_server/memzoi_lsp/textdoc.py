"""A pygls ``TextDocument`` whose lines are split the LSP way.

pygls splits a document with ``str.splitlines``, which also breaks at U+2028, U+2029, U+0085, form feed and the
other Unicode separators. Clients count lines at ``\\r\\n``, ``\\r`` and ``\\n`` only, so an incremental change
after such a character would be applied on the wrong line and the server's text would silently diverge from the
editor's. This subclass only changes how lines are split; pygls still applies every change.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pygls.workspace import TextDocument, Workspace

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


class LspTextDocument(TextDocument):
    """``TextDocument`` with LSP line splitting (see the module docstring)."""

    @property
    def lines(self) -> Sequence[str]:
        """Lines with their line breaks, split at ``\\r\\n``, ``\\r`` and ``\\n`` only."""
        return tuple(_LINE.findall(self.source))


def install(workspace: Workspace) -> None:
    """Make ``workspace`` create :class:`LspTextDocument` objects (call in ``initialize``, before any didOpen)."""
    original = workspace._create_text_document

    def create(
        doc_uri: str, source: str | None = None, version: int | None = None, language_id: str | None = None
    ) -> Any:
        doc = original(doc_uri, source=source, version=version, language_id=language_id)
        doc.__class__ = LspTextDocument  # same fields; only the line splitting differs
        return doc

    workspace._create_text_document = create  # type: ignore[method-assign]  # pygls has no factory hook
