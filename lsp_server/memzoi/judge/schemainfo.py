"""What the record and packet models say about one key: the (sub)model a key path reaches, its field, and the
values its type allows. The one home of schema introspection, for validation's "did you mean" suggestions
(:mod:`memzoi.judge.validate`) and the editor's key hover and value completion.

Key paths are tuples of field names and list indexes, as :mod:`memzoi.read.yaml12` locates them; indexes step into a
list without changing the model.
"""

from __future__ import annotations

import typing
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo


def submodel(annotation: Any) -> type[BaseModel] | None:
    """The first pydantic model inside a field's type (``Foo``, ``Foo | None``, ``list[Foo]``), or ``None``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = submodel(arg)
        if found is not None:
            return found
    return None


def field_at(model: type[BaseModel], path: tuple[str | int, ...]) -> tuple[type[BaseModel], str, FieldInfo] | None:
    """``(owning model, field name, FieldInfo)`` of the last key of ``path`` below ``model``, or ``None`` when the
    schema does not define it."""
    found: tuple[type[BaseModel], str, FieldInfo] | None = None
    current: type[BaseModel] | None = model
    for part in path:
        if isinstance(part, int):
            continue
        if current is None:  # a key below a field that is not a model
            return None
        info = current.model_fields.get(part)
        if info is None:
            return None
        found = (current, part, info)
        current = submodel(info.annotation)
    return found


def fields_at(model: type[BaseModel], path: tuple[str | int, ...]) -> list[str]:
    """Field names of the (sub)model ``path`` reaches (``[]`` when it reaches none), in declaration order."""
    if not [p for p in path if not isinstance(p, int)]:
        return list(model.model_fields)
    found = field_at(model, path)
    inner = submodel(found[2].annotation) if found else None
    return list(inner.model_fields) if inner is not None else []


def allowed_values(annotation: Any) -> list[str]:
    """The values of every ``Literal`` inside ``annotation`` (the schema's enums), in declaration order."""
    if typing.get_origin(annotation) is Literal:
        return [str(a) for a in typing.get_args(annotation)]
    out: list[str] = []
    inner = list(typing.get_args(annotation))
    if getattr(annotation, "__metadata__", None) is not None and hasattr(annotation, "__origin__"):
        inner.append(annotation.__origin__)  # Annotated[Literal[...], ...]
    for arg in inner:
        out += [v for v in allowed_values(arg) if v not in out]
    return out
