"""Frontmatter key lookup: which YAML key (as a key path) sits at an offset, and the schema documentation of
that key from the core's pydantic models (``Field(description=...)``)."""

from __future__ import annotations

import typing
from typing import Any, Literal

from pydantic import BaseModel

from memzoi.document import Document
from memzoi.workspace import Placement
from memzoi.validate import model_for
from memzoi.yaml12 import YMap, YNode, YScalar, YSeq


def key_at(doc: Document, offset: int) -> tuple[tuple[str | int, ...], YScalar] | None:
    """The key path and key node whose key text contains ``offset`` (end inclusive), or ``None``."""

    def visit(node: YNode | None, path: tuple) -> tuple[tuple, YScalar] | None:
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

    def visit(node: YNode | None, path: tuple) -> tuple[tuple, YScalar] | None:
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


def _submodel(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _submodel(arg)
        if found is not None:
            return found
    return None


def allowed_values(annotation: Any) -> list[str]:
    """The values of every ``Literal`` inside ``annotation`` (enums of the schema), in declaration order."""
    out: list[str] = []
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return [str(a) for a in typing.get_args(annotation)]
    for arg in typing.get_args(annotation):
        for v in allowed_values(arg):
            if v not in out:
                out.append(v)
    meta = getattr(annotation, "__metadata__", None)
    if meta is not None and hasattr(annotation, "__origin__"):
        for v in allowed_values(annotation.__origin__):
            if v not in out:
                out.append(v)
    return out


def field_info(doc: Document, placement: Placement, path: tuple[str | int, ...]):
    """``(model, field name, FieldInfo)`` for a key path, or ``None`` when the schema does not define it."""
    model: type[BaseModel] | None = model_for(doc, placement)
    info = None
    name = None
    for part in path:
        if isinstance(part, int):
            continue
        if model is None:
            return None
        info = model.model_fields.get(part)
        if info is None:
            return None
        name = part
        owner = model
        model = _submodel(info.annotation)
    if info is None:
        return None
    return owner, name, info
