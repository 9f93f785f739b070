"""``previewed.check_on_disk``: a file the preview's fingerprint names, looked at before the change is planned (the
editor's unsaved-buffer check), is refused ``preview_stale`` with the change's own words when its bytes on disk
changed since the preview; anything else checks nothing there."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from memzoi.ledger import ChangePlan, FileChange, Refusal
from memzoi.ledger.previewed import check_on_disk, check_previewed, fingerprint


def _plan(packet: bytes | None, record: bytes | None) -> ChangePlan:
    return ChangePlan(
        "apply",
        [FileChange("p/packet.md", packet, None), FileChange("r/record.md", record, b"after")],
    )


@given(
    packet=st.one_of(st.none(), st.binary(max_size=40)),
    now=st.one_of(st.none(), st.binary(max_size=40)),
)
def test_it_refuses_exactly_what_the_change_would_refuse_for_that_file(packet, now):
    previewed = fingerprint(_plan(packet, None))
    at_change = _plan(now, None)
    try:
        check_previewed(at_change, previewed)
        expected = None
    except Refusal as err:
        expected = err
    try:
        check_on_disk(previewed, {"p/packet.md": now}, "apply")
        got = None
    except Refusal as err:
        got = err
    assert (got is None) == (expected is None)
    if got is not None and expected is not None:
        assert (got.code, str(got), got.path) == (expected.code, str(expected), expected.path)


def test_files_it_does_not_name_and_malformed_fingerprints_check_nothing():
    previewed = fingerprint(_plan(b"old", None))
    check_on_disk(previewed, {"elsewhere.md": b"anything"}, "apply")
    check_on_disk("not-a-fingerprint", {"p/packet.md": b"new"}, "apply")
    check_on_disk(None, {"p/packet.md": b"new"}, "apply")
    with pytest.raises(Refusal) as err:
        check_on_disk(previewed, {"p/packet.md": b"new", "r/record.md": None}, "apply")
    assert err.value.code == "preview_stale" and err.value.path == "p/packet.md"
