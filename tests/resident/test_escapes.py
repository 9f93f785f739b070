"""Resident files (Zuno's §-delimited entries) and resident operations with every escape YAML or JSON can
decode to (issue 30): lone surrogates, controls, invisible and bidi characters, NEL/LS/PS. An operation holding a
lone surrogate is refused with ``invalid_encoding`` (Zuno's files and database are UTF-8); every other one is
recorded, applied or refused by its rule, and never raises anything else; the file left behind is UTF-8 and the
editor's findings of any text (a client's, possibly with a lone surrogate) come without an exception."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from memzoi.base.utf8 import encodable
from memzoi.ledger import Refusal
from memzoi.resident import editor, service
from memzoi.resident.format import serialize
from memzoi.resident.scope import which_file

from .. import escapes
from .conftest import rules

pieces = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 200)), min_size=1, max_size=5)
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@SETTINGS
@given(st.sampled_from(["add", "replace", "remove"]), st.sampled_from(["content", "old_text", "reason"]), pieces)
def test_operations_with_escaped_text_are_applied_or_refused(project, action, field, pieces_):
    value = escapes.decoded(pieces_)
    args = {"content": "Run hatch build.", "old_text": "Run hatch", "reason": "why"}
    args[field] = value
    if action == "add":
        args.pop("old_text")  # an add takes no locator
    used = not (action == "add" and field == "old_text")
    try:
        proposed = service.propose(
            project, scope="project", action=action, reason=args.pop("reason"), confidence=1.0, actor="tester", **args
        )
    except Refusal as err:
        assert err.code != "internal_error"
        assert encodable(err.message)
        assert encodable(value) or err.code == "invalid_encoding" or not used
        return
    assert encodable(value) or not used
    try:
        service.apply(project, proposed.candidate.id, actor="tester")
    except Refusal as err:
        assert encodable(err.message)
    path = rules(project)
    if path.exists():
        path.read_bytes().decode("utf-8")  # what was written is UTF-8


@SETTINGS
@given(st.lists(pieces, min_size=1, max_size=4), st.booleans())
def test_resident_texts_with_escaped_entries_get_findings(project, entries, on_disk):
    texts = [escapes.decoded(p) or "x" for p in entries]
    path = rules(project)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = serialize(texts)
    data = text.encode("utf-8", "surrogatepass")  # a lone surrogate becomes bytes that are not UTF-8
    if on_disk:
        path.write_bytes(data)
        got = editor.check_file(path)
    else:  # the editor's text, as a client sent it (it may hold a lone surrogate)
        where = which_file(path, [project])
        assert where is not None
        got = (text, editor.findings(text, where[1], []))
    assert got is not None
    found = got[1]
    assert all(encodable(f.message) for f in found)
    if on_disk and not encodable(text):
        assert "invalid_encoding" in {f.code for f in found}
