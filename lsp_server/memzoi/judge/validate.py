"""Schema validation of a framed document against the current profile, with findings on exact keys and values.

Pydantic does the type and enum checks; each validation error is mapped to a finding whose span is the key
(for ``unknown_key``), the value (``invalid_value``, ``invalid_timestamp``, …) or the enclosing block (one
``missing_key`` per mapping, listing every missing key). Cross-field rules of Memzoi's parser (H1, id/path,
lane retention, proposal shape and resolution) are added after. Messages name the field, never its value.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ValidationError

from ..base.findings import Finding, Fix, TextEdit, finding
from ..models import PendingProposal, RecordFrontmatter, ResolvedProposal, proposal_rule_violations
from ..models.common import RetentionFacts, is_concept_id, is_identifier, validate_retention
from ..read.document import Document
from ..read.text import rust_trim
from ..read.yaml12 import YNode, locate
from .legacy import NAME_MAX, record_name_bytes
from .schemainfo import fields_at
from .workspace import Placement, Role

_TYPE_WORDS = {
    "string_type": "a string",
    "float_type": "a number",
    "int_type": "an integer",
    "bool_type": "true or false",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping of fields",
    "model_attributes_type": "a mapping of fields",
    "none_required": "empty",
}


def model_for(doc: Document, placement: Placement) -> type[BaseModel]:
    """The model a document is validated against: by folder, else by its ``kind``/``status`` fields."""
    if placement.role is Role.RECORD:
        return RecordFrontmatter
    if placement.role is Role.PENDING:
        return PendingProposal
    if placement.role in (Role.APPLIED, Role.REJECTED):
        return ResolvedProposal
    data = doc.data or {}
    if data.get("kind") == "proposal":
        return PendingProposal if data.get("status") in (None, "proposed") else ResolvedProposal
    return RecordFrontmatter


def dotted(loc: tuple[Any, ...]) -> str:
    """``("proposal", "target")`` → ``proposal.target``; list indices as ``[i]``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


#: Unknown keys per document that get a "rename it to …" suggestion; a frontmatter with thousands of unknown keys
#: is not a typo, and matching each against the schema would take seconds.
_MAX_SUGGESTIONS = 50


class Validator:
    """Collects schema findings for one document; see :func:`validate_document`."""

    def __init__(
        self, doc: Document, placement: Placement, ignore: frozenset[tuple[str, tuple[Any, ...]]] = frozenset()
    ):
        self.doc = doc
        self.placement = placement
        self.root: YNode | None = doc.yaml_root
        self.findings: list[Finding] = []
        self.ignore = ignore  # (code, loc) pairs suppressed because the legacy upgrade resolves them

    def anchor(self, loc: tuple[Any, ...], *, key: bool = False) -> tuple[int, int]:
        """Span for a location: the value node (or key node when ``key``), else the nearest enclosing key, else
        the opening ``---`` line."""
        k, v = locate(self.root, loc)
        if key and k is not None and (not loc or loc[-1] == str(k.value)):
            return k.start, k.end
        if v is not None and not key:
            return v.start, v.end
        if k is not None:
            return k.start, k.end
        return self.opening()

    def opening(self) -> tuple[int, int]:
        start = 1 if self.doc.bom else 0
        return start, min(start + 3, len(self.doc.text))

    def add(
        self, code: str, loc: tuple[Any, ...], message: str, *, key: bool = False, fixes: Iterable[Fix] = ()
    ) -> None:
        if (code, loc) in self.ignore:
            return
        start, end = self.anchor(loc, key=key)
        self.findings.append(finding(code, message, start, end, fixes=tuple(fixes), loc=list(map(str, loc))))

    def run(self, model: type[BaseModel]) -> BaseModel | None:
        data = self.doc.data
        assert data is not None
        parsed: BaseModel | None = None
        try:
            # model_validate(data) without its keyword handling: this runs once per file of a workspace check.
            parsed = model.__pydantic_validator__.validate_python(data)
        except ValidationError as err:
            self._map_errors(model, err)
        return parsed

    def _map_errors(self, model: type[BaseModel], err: ValidationError) -> None:
        missing: dict[tuple[Any, ...], list[str]] = {}
        suggestions = _MAX_SUGGESTIONS  # spelling suggestions cost a fuzzy match each: a few per file suffice
        for e in err.errors(include_url=False, include_input=False):
            loc = tuple(e["loc"])
            kind = e["type"]
            name = dotted(loc)
            if kind == "missing":
                if ("missing_key", loc) not in self.ignore:
                    missing.setdefault(loc[:-1], []).append(str(loc[-1]))
            elif kind == "extra_forbidden":
                close: list[str] = []
                if suggestions > 0:
                    suggestions -= 1
                    close = difflib.get_close_matches(str(loc[-1]), fields_at(model, loc[:-1]), n=1, cutoff=0.75)
                fixes = []
                message = f"unknown key `{name}`: the current Memzoi profile does not define it; remove it"
                if close:
                    message += f" or rename it to `{close[0]}`"
                    k, _ = locate(self.root, loc)
                    if k is not None:
                        fixes.append(Fix(f"Rename to `{close[0]}`", (TextEdit(k.start, k.end, close[0]),)))
                self.add("unknown_key", loc, message, key=True, fixes=fixes)
            elif kind == "literal_error":
                expected = e.get("ctx", {}).get("expected", "")
                self.add("invalid_value", loc, f"`{name}` must be one of {expected}")
            elif kind in _TYPE_WORDS:
                self.add("invalid_value", loc, f"`{name}` must be {_TYPE_WORDS[kind]}")
            elif kind in (
                "invalid_value",
                "invalid_timestamp",
                "invalid_identifier",
                "unsafe_path",
                "invalid_origin",
                "invalid_retention",
            ):
                self.add(kind, loc, f"`{name}`: {e['msg']}")
            elif kind in ("greater_than_equal", "less_than_equal"):
                self.add("invalid_value", loc, f"`{name}` must be between 0 and 1")
            else:
                self.add("invalid_value", loc, f"`{name}`: {e['msg']}")
        for parent, keys in missing.items():
            start, end = self.anchor(parent, key=True) if parent else self.opening()
            where = f" in `{dotted(parent)}`" if parent else ""
            listed = ", ".join(f"`{k}`" for k in keys)
            noun = "key" if len(keys) == 1 else "keys"
            self.findings.append(
                finding(
                    "missing_key",
                    f"missing required {noun}{where}: {listed}",
                    start,
                    end,
                    keys=keys,
                    loc=list(map(str, parent)),
                )
            )


def validate_document(
    doc: Document, placement: Placement, *, ignore: frozenset[tuple[str, tuple[Any, ...]]] = frozenset()
) -> tuple[BaseModel | None, list[Finding]]:
    """Validate ``doc``'s frontmatter (``doc.data`` must be a dict) for its placement.

    Returns the parsed model (``None`` when validation failed) and the schema findings. ``ignore`` holds
    ``(code, loc)`` pairs to suppress (used for legacy records, whose upgrade supplies those keys).
    """
    v = Validator(doc, placement, ignore)
    data = doc.data or {}
    model = model_for(doc, placement)
    parsed = v.run(model)
    _identity_rules(v, data, placement, model)
    _body_rules(v, data, model)
    _retention_rules(v, data, parsed)
    if model is not RecordFrontmatter:
        for code, loc, message in proposal_rule_violations(data):
            v.add(code, loc, message, key=code == "invalid_resolution" and loc == ("status",))
    return parsed, v.findings


def _identity_rules(v: Validator, data: dict[str, Any], placement: Placement, model: type[BaseModel]) -> None:
    ident = placement.identity
    raw_id = data.get("id")
    if placement.role is Role.RECORD and ident is not None:
        if not is_concept_id(ident):
            v.findings.append(
                finding(
                    "invalid_identifier",
                    "the file path is not a valid record id: path segments below `.memzoi/records/` must use "
                    "lower-case letters, digits and `-`, starting and ending with a letter or digit; rename the file",
                    *v.opening(),
                )
            )
        elif isinstance(raw_id, str) and is_identifier(raw_id) and raw_id != ident:
            _, node = locate(v.root, ("id",))
            fixes: tuple[Fix, ...] = ()
            if node is not None:
                fixes = (Fix(f"Set id to `{ident}` (the file path)", (TextEdit(node.start, node.end, ident),)),)
            v.add(
                "id_path_mismatch",
                ("id",),
                f"`id` differs from the record's path id `{ident}`: Memzoi keys the "
                "record by its path (references, supersedes and lifecycle use that id, not this one) and its "
                "writers always set `id` from the path; set the id from the path, or rename the file",
                fixes=fixes,
            )
    elif placement.role.is_proposal and ident is not None and not is_identifier(ident):
        v.findings.append(
            finding(
                "invalid_identifier",
                "the packet's file name is not a valid proposal id: use lower-case "
                "letters, digits, `-` and `_`, starting and ending with a letter or digit; rename the file",
                *v.opening(),
            )
        )
    # A record is known by its path id (Memzoi's concept id); a packet by its frontmatter id.
    own = ident if placement.role is Role.RECORD and ident else (raw_id if isinstance(raw_id, str) else ident)
    lineage = data.get("lineage")
    if isinstance(lineage, dict) and own and lineage.get("predecessor_id") == own:
        v.add("invalid_value", ("lineage", "predecessor_id"), "`lineage.predecessor_id` cannot be the record itself")
    if model is RecordFrontmatter and own and data.get("supersedes") == own:
        v.add("invalid_value", ("supersedes",), "a record cannot supersede itself")


def _body_rules(v: Validator, data: dict[str, Any], model: type[BaseModel]) -> None:
    doc = v.doc
    title = data.get("title")
    if doc.h1 is not None and isinstance(title, str) and rust_trim(title) and doc.h1_text != rust_trim(title):
        s, e = doc.h1
        fixes = [Fix("Set the H1 to the title", (TextEdit(s, e, rust_trim(title)),))]
        _, node = locate(v.root, ("title",))
        if node is not None:
            fixes.append(
                Fix(
                    "Set the title to the H1",
                    (TextEdit(node.start, node.end, json.dumps(doc.h1_text, ensure_ascii=False)),),
                )
            )
        v.findings.append(
            finding(
                "title_h1_mismatch",
                "the H1 heading must equal the frontmatter `title` exactly",
                s,
                e,
                fixes=tuple(fixes),
            )
        )
    proposal = data.get("proposal")
    action = proposal.get("action") if isinstance(proposal, dict) else None
    if model is PendingProposal and action in ("create", "supersede") and isinstance(title, str):
        size = record_name_bytes(rust_trim(title))
        if size is not None:
            v.add(
                "title_too_long",
                ("title",),
                f"the title makes a record file name of {size} bytes, over the "
                f"{NAME_MAX} a file name may have, and Memzoi does not shorten the record id, so applying this "
                "packet can only fail; reject it and propose it again with a shorter title",
            )
    if doc.body_span[0] == doc.body_span[1]:  # an empty body (without copying it out of the text)
        where = doc.h1 or (doc.fm_close if doc.fm_close else v.opening())
        what = "proposal" if model is not RecordFrontmatter else "record"
        v.findings.append(
            finding("empty_body", f"the {what} body is empty: write the memory below the title", where[0], where[1])
        )


def _retention_rules(v: Validator, data: dict[str, Any], parsed: BaseModel | None) -> None:
    lane = data.get("lane")
    retention = data.get("retention")
    if not isinstance(retention, dict) or not isinstance(lane, str):
        return
    facts = getattr(parsed, "retention", None)
    if facts is None:  # the document did not validate: check its retention block alone
        try:
            facts = RetentionFacts.model_validate(retention)
        except ValidationError:
            return  # type errors are already reported on the exact fact
    for field, message in validate_retention(lane, facts):
        loc = ("retention", field) if field else ("retention",)
        v.add("invalid_retention", loc, f"retention does not fit lane `{lane}`: {message}", key=not field)
