"""Tool arguments as agent clients really send them: put right before validation where a client is sloppy in a
way that cannot change their meaning (:func:`coerce_arguments`); everything else is left to the tool's strict
model."""

from __future__ import annotations

from typing import Any


def _schema_types(prop: dict[str, Any]) -> set[str]:
    """The JSON types a property schema admits (``type``, or each branch of ``anyOf``)."""
    if "type" in prop:
        t = prop["type"]
        return set(t) if isinstance(t, list) else {t}
    return {t for branch in prop.get("anyOf", ()) for t in _schema_types(branch)}


def coerce_arguments(schema: dict[str, Any], arguments: Any) -> Any:
    """``arguments`` with the values some clients send in the wrong JSON type put right, before validation: a
    string holding the JSON of an array, object or number where the property admits that type and not a string
    (Claude Code sends ``"[\"a\"]"`` for an array at times), and an integral float (``10.0``) where it admits an
    integer. Anything else is left for validation to judge; nothing is echoed. ``schema``: the tool's input
    schema (an object schema); ``arguments``: the call's arguments (returned as they are when not an object)."""
    import json

    if not isinstance(arguments, dict):
        return arguments
    props = schema.get("properties", {})
    out = dict(arguments)
    for name, value in arguments.items():
        types = _schema_types(props.get(name, {}))
        if isinstance(value, str) and "string" not in types and types & {"array", "object", "number", "integer"}:
            try:
                decoded = json.loads(value)
            except ValueError:
                continue
            kind = {list: "array", dict: "object", bool: "boolean", int: "integer", float: "number"}.get(type(decoded))
            if kind in types or (kind == "integer" and "number" in types):
                out[name] = decoded
                value = decoded
        if isinstance(value, float) and value.is_integer() and "integer" in types and "number" not in types:
            out[name] = int(value)
    return out
