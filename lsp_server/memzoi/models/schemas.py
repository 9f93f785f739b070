"""JSON Schemas of every file format, generated from the core's pydantic models.

``python -m memzoi.models.schemas [DIR]`` (re)writes them (default ``schemas/``); a test fails when the committed files in
``schemas/`` differ from what this module generates, so the schemas can never drift from the validator. The wheel
ships them (:mod:`memzoi.base.resources`) and ``memzoi schema NAME`` prints one. Each ``$id`` is a URN
(:func:`schema_id`), stable across releases.

The frontmatter schemas describe values *after* the reader trims the strings Memzoi's parser trims
(:mod:`memzoi.read.trimming`): ``profile: " memzoi "`` or a quoted, padded ``timestamp`` is valid to Memzoi and to
``memzoi check``, although ``const: "memzoi"`` or ``format: date-time`` applied to the raw text refuses it. JSON
Schema cannot trim, so :func:`generate` says so in the description of each such field and of the schema.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..judge.config_model import MemzoiConfig
from ..read.trimming import TRIMMED_BLOCKS, TRIMMED_ITEMS, TRIMMED_KEYS
from . import PendingProposal, RecordFrontmatter, ResolvedProposal
from .materialization import MaterializationCandidate, MaterializationDecision, MaterializationPlan

#: File name in ``schemas/`` → (model, title). Other modules add their formats here.
REGISTRY: dict[str, tuple[type[BaseModel], str]] = {
    "record.schema.json": (RecordFrontmatter, "Memzoi record frontmatter (profile memzoi)"),
    "proposal.schema.json": (PendingProposal, "Memzoi pending proposal packet frontmatter"),
    "resolved-proposal.schema.json": (ResolvedProposal, "Memzoi resolved proposal packet frontmatter"),
    "materialization-candidate.schema.json": (MaterializationCandidate, "Memzoi repository materialization candidate"),
    "materialization-plan.schema.json": (MaterializationPlan, "Memzoi repository materialization plan"),
    "materialization-decision.schema.json": (MaterializationDecision, "Memzoi repository materialization decision"),
    "config.schema.json": (MemzoiConfig, "Memzoi project configuration (.memzoi/config.toml)"),
}


#: The schemas of frontmatter, whose strings the reader trims as Memzoi does before validating them.
_FRONTMATTER = frozenset({"record.schema.json", "proposal.schema.json", "resolved-proposal.schema.json"})
_FIELD_NOTE = "Surrounding white space is trimmed before this is checked, as Memzoi's parser does."
_SCHEMA_NOTE = (
    "\n\nThese rules hold for the values after the reader trims surrounding white space where Memzoi's parser does "
    '(the fields whose descriptions say so): `profile: " memzoi "` and a quoted, padded `timestamp` are valid, '
    "although `const` and `format: date-time` applied to the untrimmed text would refuse them."
)


def _note_trimming(schema: dict[str, Any]) -> None:
    """Add the trimming notes (see the module docstring) to a frontmatter schema, in place."""
    defs = schema.get("$defs", {})

    def note(prop: dict[str, Any]) -> None:
        prop["description"] = (prop.get("description", "").rstrip() + " " + _FIELD_NOTE).strip()

    for key, prop in schema.get("properties", {}).items():
        if key in TRIMMED_KEYS or key in TRIMMED_ITEMS:
            note(prop)
        if key in TRIMMED_BLOCKS and "$ref" in prop:
            block = defs.get(prop["$ref"].rsplit("/", 1)[-1], {})
            for name in sorted(TRIMMED_BLOCKS[key] & block.get("properties", {}).keys()):
                note(block["properties"][name])
    schema["description"] = schema.get("description", "").rstrip() + _SCHEMA_NOTE


def schema_id(file_name: str) -> str:
    """The stable ``$id`` of a schema: ``urn:memzoi-lsp:schema:<name>`` (``record``, ``config``, …). A URN names
    the schema without pretending to a web location; ``memzoi schema <name>`` prints the schema it names."""
    return f"urn:memzoi-lsp:schema:{file_name.removesuffix('.schema.json')}"


def generate() -> dict[str, str]:
    """Schema file name → JSON text (sorted keys, two-space indent, trailing newline)."""
    out: dict[str, str] = {}
    for name, (model, title) in REGISTRY.items():
        schema = model.model_json_schema()
        if name in _FRONTMATTER:
            _note_trimming(schema)
        schema["title"] = title
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["$id"] = schema_id(name)
        out[name] = json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    return out


def write(directory: Path) -> list[Path]:
    """Write every schema into ``directory``; returns the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in generate().items():
        path = directory / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":  # pragma: no cover - developer entry point
    for p in write(Path(sys.argv[1] if len(sys.argv) > 1 else "schemas")):
        print(p, file=sys.stderr)
