"""Schema introspection (memzoi.judge.schemainfo): the one home of what the models say about a key, for validation's
suggestions and the editor's hover and completion."""

from __future__ import annotations

from typing import Annotated, Literal, Optional

from memzoi.judge.schemainfo import allowed_values, field_at, fields_at, submodel
from memzoi.models import RecordFrontmatter


def test_a_key_path_reaches_its_field_through_submodels_and_list_indexes():
    owner, name, info = field_at(RecordFrontmatter, ("lane",))
    assert owner is RecordFrontmatter and name == "lane" and "retention" in (info.description or "")
    owner, name, _ = field_at(RecordFrontmatter, ("origin", "route"))
    assert owner is submodel(RecordFrontmatter.model_fields["origin"].annotation) and name == "route"
    assert field_at(RecordFrontmatter, ("origin", "nope")) is None
    assert field_at(RecordFrontmatter, ("lane", "deeper")) is None  # a scalar has no keys
    assert field_at(RecordFrontmatter, (0,)) is None


def test_fields_at_lists_what_a_typo_could_have_meant():
    assert "lane" in fields_at(RecordFrontmatter, ())
    assert "route" in fields_at(RecordFrontmatter, ("origin",))
    assert fields_at(RecordFrontmatter, ("lane",)) == [] and fields_at(RecordFrontmatter, ("nope",)) == []


def test_allowed_values_read_literals_inside_optionals_and_annotations():
    assert allowed_values(RecordFrontmatter.model_fields["lane"].annotation) == [
        "session",
        "semantic",
        "episodic",
        "procedural",
    ]
    assert allowed_values(Optional[Annotated[Literal["a", "b"], "meta"]]) == ["a", "b"]  # noqa: UP045 - the old spelling
    assert allowed_values(Literal["a"] | Literal["a", "c"]) == ["a", "c"]
    assert allowed_values(int) == []
