"""Recognising a materialization artifact (memzoi.lifecycle.artifacts.artifact_kind) never fails on JSON of
another shape: the editor asks it of every JSON document it offers code actions for."""

from __future__ import annotations

import json

import pytest

from memzoi.lifecycle.artifacts import artifact_kind
from memzoi.lifecycle.materialize import PLAN_SCHEMA


@pytest.mark.parametrize("schema", [[PLAN_SCHEMA], {"id": PLAN_SCHEMA}, 3, None, True, "another/schema"])
def test_a_schema_that_names_no_artifact_is_no_kind(schema):
    # a list or object `schema` was an unhashable-type TypeError
    assert artifact_kind(json.dumps({"schema": schema})) is None


def test_the_plan_schema_is_a_plan():
    assert artifact_kind(json.dumps({"schema": PLAN_SCHEMA, "plan_id": "p1"})) == "plan"
