"""Frontmatter key lookup: which YAML key (as a key path) sits at an offset, and the schema documentation of
that key from the core's pydantic models (``Field(description=...)``, through :mod:`memzoi.judge.schemainfo`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memzoi.judge.workspace import Placement
from memzoi.read.yaml_tree import YMap, YNode, YScalar, YSeq

if TYPE_CHECKING:
    from memzoi.read.document import Document


def key_at(doc: Document, offset: int) -> tuple[tuple[str | int, ...], YScalar] | None:
    """The key path and key node whose key text contains ``offset`` (end inclusive), or ``None``."""

    def visit(node: YNode | None, path: tuple[str | int, ...]) -> tuple[tuple[str | int, ...], YScalar] | None:
        if isinstance(node, YMap):
            for name, (key, value) in node.entries.items():
                if key.start <= offset <= key.end:
                    return path + (name,), key
                if value is not None and value.start <= offset <= value.end:
                    found = visit(value, path + (name,))
                    if found:
                        return found
        elif isinstance(node, YSeq):
            for i, item in enumerate(node.items):
                if item.start <= offset <= item.end:
                    return visit(item, path + (i,))
        return None

    return visit(doc.mapping, ())


def value_at(doc: Document, offset: int) -> tuple[tuple[str | int, ...], YScalar] | None:
    """The key path and scalar value node containing ``offset`` (end inclusive), or ``None``."""

    def visit(node: YNode | None, path: tuple[str | int, ...]) -> tuple[tuple[str | int, ...], YScalar] | None:
        if isinstance(node, YMap):
            for name, (_key, value) in node.entries.items():
                if value is not None and value.start <= offset <= value.end:
                    return visit(value, path + (name,))
        elif isinstance(node, YSeq):
            for i, item in enumerate(node.items):
                if item.start <= offset <= item.end:
                    return visit(item, path + (i,))
        elif isinstance(node, YScalar):
            return path, node
        return None

    return visit(doc.mapping, ())


def field_info(doc: Document, placement: Placement, path: tuple[str | int, ...]) -> tuple[Any, str, Any] | None:
    """``(model, field name, FieldInfo)`` for a key path of the document's schema, or ``None`` when the schema
    does not define it (:func:`memzoi.judge.schemainfo.field_at`)."""
    from memzoi.judge.schemainfo import field_at  # noqa: PLC0415 lazy: start-up - the record and packet models, loaded at the first key hover
    from memzoi.judge.validate import model_for  # noqa: PLC0415 lazy: start-up

    return field_at(model_for(doc, placement), path)
