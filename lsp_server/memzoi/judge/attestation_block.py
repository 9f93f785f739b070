"""Memzoi's ``materialization:`` block of a record (``MaterializationMetadata``, reference ``memzoi-format.md`` §4.1;
``materialization.rs@164dcd6b``) as a strict model: the reviewed decision's identities, its instant, the safety
contract and the canonical revision, with Memzoi's shape rule (``target`` and ``reason`` for supersede/tombstone
only). Validation against a document and staleness: :mod:`memzoi.judge.attestation`.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from ..base.utf8 import utf8_bytes
from ..models.common import NonEmptyStr, Strict, parse_rfc3339

METADATA_SCHEMA = "memzoi/repository-materialization"
SAFETY_CONTRACT = "memzoi/repository-write-safety-v1"
_BLAKE3_ID = re.compile(r"^blake3:[0-9a-f]{64}$")


def _blake3_id(value: str) -> str:
    if not _BLAKE3_ID.match(value):
        raise PydanticCustomError("materialization_metadata", "must be `blake3:` followed by 64 lower-case hex digits")
    return value


def _decision_instant(value: str) -> str:
    if value != value.strip() or parse_rfc3339(value) is None:
        raise PydanticCustomError(
            "materialization_metadata", "must be an RFC 3339 timestamp with a timezone and no surrounding spaces"
        )
    return value


def _reason(value: str) -> str:
    if value != value.strip() or not value or "\n" in value or "\r" in value or len(utf8_bytes(value)) > 280:
        raise PydanticCustomError(
            "materialization_metadata", "must be one trimmed, non-empty line of at most 280 bytes"
        )
    return value


Blake3Id = Annotated[str, AfterValidator(_blake3_id)]


class RevisionRef(Strict):
    """``{schema: memzoi/repository-canonical-revision, revision_hash: blake3:<hex>}``."""

    schema_: Literal["memzoi/repository-canonical-revision"] = Field(alias="schema", description="Revision schema.")
    revision_hash: Blake3Id = Field(description="Canonical revision, `blake3:` and 64 lower-case hex digits.")


class MaterializationTarget(Strict):
    """``target`` of a supersede/tombstone attestation: the counterpart record and its expected revision."""

    record_id: NonEmptyStr = Field(description="Id of the superseded or tombstoned record.")
    expected_revision: RevisionRef = Field(description="Revision the target had when the decision was made.")


class MaterializationMetadata(Strict):
    """Memzoi's direct ``MaterializationMetadata`` block (``materialization.rs@164dcd6b``, deny_unknown_fields).

    ``target`` and ``reason`` are required for supersede/tombstone and forbidden for create/update.
    """

    schema_: Literal["memzoi/repository-materialization"] = Field(alias="schema", description="Metadata schema.")
    action: Literal["create", "update", "supersede", "tombstone"] = Field(description="Materialized action.")
    plan_id: Blake3Id = Field(description="Plan identity.")
    candidate_id: Blake3Id = Field(description="Candidate identity.")
    decision_id: Blake3Id = Field(description="Decision identity.")
    decision_at: Annotated[str, AfterValidator(_decision_instant)] = Field(description="Decision time, RFC 3339.")
    safety_contract: NonEmptyStr = Field(description="Safety contract, e.g. `memzoi/repository-write-safety-v1`.")
    revision: RevisionRef = Field(description="Canonical revision of the record's semantic content.")
    target: MaterializationTarget | None = Field(None, description="Counterpart of a supersede or tombstone.")
    reason: Annotated[str, AfterValidator(_reason)] | None = Field(None, description="Why (supersede/tombstone).")

    @model_validator(mode="after")
    def _action_shape(self) -> MaterializationMetadata:
        lifecycle = self.action in ("supersede", "tombstone")
        if lifecycle and (self.target is None or self.reason is None):
            raise PydanticCustomError(
                "materialization_shape", f"{self.action} attestations need both `target` and `reason`"
            )
        if not lifecycle and (self.target is not None or self.reason is not None):
            raise PydanticCustomError(
                "materialization_shape", f"{self.action} attestations cannot carry `target` or `reason`"
            )
        return self
