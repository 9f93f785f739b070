"""The JSON Schemas of the agent tools: input schemas as clients handle them best, output schemas, and the checks
every registered tool's schemas must pass (:func:`schema_problems`).

MCP (specification 2025-06-18, "Tools"): ``inputSchema`` is a JSON Schema object; ``outputSchema`` is optional,
and when given a successful result's ``structuredContent`` must conform to it (the SDK's client validates it).
Clients and models do best with a flat schema: an optional argument is a plain optional property (left out when
not wanted), not ``anyOf [T, null]`` with ``default: null``, which some clients render as a required union or fill
with ``null``; every property says what it is for (``description``); a tool's ``examples`` (the JSON Schema
keyword) show whole calls.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema


class _PlainOptional(GenerateJsonSchema):
    """Pydantic's schema generator with ``T | None`` written as ``T`` and no ``default: null``: leaving the
    property out is how a caller says "none" (the models still accept an explicit ``null``)."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        out = super().default_schema(schema)
        if out.get("default", 0) is None:
            del out["default"]
        return out


@functools.cache
def _input_schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema(schema_generator=_PlainOptional)


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The input schema of a tool whose arguments ``model`` validates: an object schema whose optional
    properties are plain optional, with the model's ``examples`` (whole argument objects, from its
    ``json_schema_extra``). A fresh copy (callers may change it)."""
    return copy.deepcopy(_input_schema(model))


@functools.cache
def _output_schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema(mode="serialization")


def output_schema(model: type[BaseModel] | None) -> dict[str, Any] | None:
    """The output schema of a tool whose successful results ``model`` describes, or ``None`` for none. A fresh
    copy."""
    return None if model is None else copy.deepcopy(_output_schema(model))


def _walk(node: Any, where: str) -> Iterator[tuple[str, Any]]:
    """Every ``(json pointer, schema object)`` below ``node``."""
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            yield from _walk(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, f"{where}/{i}")


def schema_problems(name: str, schema: dict[str, Any], *, output: bool = False) -> list[str]:
    """What ``schema`` (the input schema of tool ``name``, or its output schema when ``output``) lacks, one line
    each: a property without a ``description``, and, in an input schema, an ``anyOf`` that admits ``null``
    (write the property as plain optional). ``[]`` when it is as this module writes them."""
    problems = []
    for where, node in _walk(schema, ""):
        props = node.get("properties")
        if isinstance(props, dict):
            problems += [
                f"{name}: property {where}/properties/{key} has no description"
                for key, prop in props.items()
                if isinstance(prop, dict) and not prop.get("description")
            ]
        branches = node.get("anyOf")
        if not output and isinstance(branches, list) and {"type": "null"} in branches:
            problems.append(f"{name}: {where} admits null through anyOf; make the property plain optional")
    return problems
