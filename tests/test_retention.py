"""Retention boundaries per lane, the inclusive boundary, the current assertion and ``retention_query_only``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, strategies as st

from memzoi.judge import retention_rules
from memzoi.judge.analysis import analyze_text
from memzoi.judge.retention import InvalidRetention, current_assertion, evaluate_retention, format_instant

from . import builders

T0 = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)
S = "2026-07-01T12:00:00Z"


def at(delta: timedelta) -> datetime:
    return T0 + delta


@pytest.mark.parametrize(
    "lane,facts,boundary,reason",
    [
        ("session", {"started_at": S}, "2026-07-02T12:00:00Z", "session_inactivity_lease"),
        (
            "session",
            {"started_at": S, "last_continued_at": "2026-07-07T00:00:00Z"},
            "2026-07-08T00:00:00Z",
            "session_inactivity_lease",
        ),
        # continued late enough that the 7-day cap comes first
        (
            "session",
            {"started_at": S, "last_continued_at": "2026-07-08T00:00:00Z"},
            "2026-07-08T12:00:00Z",
            "session_maximum_age",
        ),
        ("session", {"started_at": S, "closed_at": "2026-07-01T13:00:00Z"}, "2026-07-01T13:00:00Z", "session_closed"),
        (
            "session",
            {"started_at": S, "explicit_expires_at": "2026-07-01T12:30:00+00:00"},
            "2026-07-01T12:30:00Z",
            "explicit_expiry",
        ),
        ("episodic", {"occurred_at": S}, "2026-07-31T12:00:00Z", "episodic_ordinary_window"),
        (
            "episodic",
            {"occurred_at": S, "explicit_expires_at": "2026-07-10T00:00:00Z"},
            "2026-07-10T00:00:00Z",
            "explicit_expiry",
        ),
        ("semantic", {}, None, "no_age_limit"),
        ("procedural", {"explicit_expires_at": "2026-08-01T02:00:00+02:00"}, "2026-08-01T00:00:00Z", "explicit_expiry"),
    ],
)
def test_boundary_and_reason(lane, facts, boundary, reason):
    d = evaluate_retention(lane, facts, T0)
    assert (d.boundary, d.reason) == (boundary, reason)


@pytest.mark.parametrize(
    "lane,facts,boundary",
    [
        ("session", {"started_at": S}, timedelta(hours=24)),
        ("session", {"started_at": S, "last_continued_at": "2026-07-08T11:00:00Z"}, timedelta(days=7)),
        ("episodic", {"occurred_at": S}, timedelta(days=30)),
        ("semantic", {"explicit_expires_at": "2026-07-02T12:00:00Z"}, timedelta(days=1)),
    ],
)
def test_boundary_is_inclusive(lane, facts, boundary):
    assert evaluate_retention(lane, facts, at(boundary - timedelta(microseconds=1))).state == "current"
    assert evaluate_retention(lane, facts, at(boundary)).state == "query_only"
    assert evaluate_retention(lane, facts, at(boundary + timedelta(seconds=1))).state == "query_only"


def test_durable_lane_without_expiry_is_always_current():
    assert evaluate_retention("semantic", {}, datetime(2999, 1, 1, tzinfo=UTC)).state == "current"


@pytest.mark.parametrize(
    "lane,facts,needle",
    [
        ("session", {}, "started_at"),
        ("session", {"started_at": S, "occurred_at": S}, "occurred_at"),
        ("session", {"started_at": S, "last_continued_at": "2026-07-09T12:00:00Z"}, "7 days"),
        ("session", {"started_at": S, "closed_at": "2026-06-01T00:00:00Z"}, "closed_at"),
        ("episodic", {}, "occurred_at"),
        ("episodic", {"occurred_at": S, "started_at": S}, "session lane"),
        (
            "episodic",
            {"occurred_at": S, "episodic_extension": {"until": S, "authorization_event_id": "e"}},
            "episodic_extension",
        ),
        ("semantic", {"occurred_at": S}, "not allowed"),
        ("semantic", {"explicit_expires_at": "2026-07-01"}, "explicit_expires_at"),
    ],
)
def test_invalid_facts_raise_with_rule(lane, facts, needle):
    with pytest.raises(InvalidRetention) as err:
        evaluate_retention(lane, facts, T0)
    assert needle in str(err.value)


def test_current_assertion():
    ok = current_assertion("active", "episodic", {"occurred_at": S}, at(timedelta(days=1)))
    assert ok.is_current and ok.exclusions == []
    late = current_assertion("active", "episodic", {"occurred_at": S}, at(timedelta(days=30)))
    assert not late.is_current
    assert late.exclusions == [
        {"kind": "retention", "reason": "episodic_ordinary_window", "boundary": "2026-07-31T12:00:00Z"}
    ]
    gone = current_assertion("superseded", "semantic", {}, T0)
    assert gone.exclusions == [{"kind": "lifecycle_status", "status": "superseded"}]
    bad = current_assertion("active", "session", {}, T0)
    assert not bad.is_current and bad.retention is None


def test_format_instant():
    assert format_instant(datetime(2026, 1, 2, 3, 4, 5, 120000, tzinfo=UTC)) == "2026-01-02T03:04:05.12Z"


PATH = "ws/.memzoi/records/session-note.md"


def _record(lane="session", status="active", retention=None) -> str:
    """A record in ``lane`` with ``retention`` facts (by default a session started at ``S``)."""
    facts = {"started_at": S} if retention is None else retention
    return builders.record(
        "session-note",
        type="fact",
        lane=lane,
        status=status,
        title="Session note",
        timestamp=S,
        confidence=0.8,
        retention=facts,
        body="Something learned in the session.",
    )


def test_query_only_finding_at_fixed_clock():
    text = _record()
    assert analyze_text(text, PATH, now=at(timedelta(hours=23))).findings == []
    a = analyze_text(text, PATH, now=at(timedelta(hours=24)))
    [f] = a.findings
    assert f.code == "retention_query_only" and f.severity == 3
    assert a.text[f.start : f.end] == "retention"
    assert "2026-07-02T12:00:00Z" in f.message and "session_inactivity_lease" in f.message
    assert f.data == {"boundary": "2026-07-02T12:00:00Z", "reason": "session_inactivity_lease"}


def test_seven_day_cap_and_episodic_window_findings():
    text = _record(retention={"started_at": S, "last_continued_at": "2026-07-08T11:00:00Z"})
    assert analyze_text(text, PATH, now=at(timedelta(days=7, seconds=-1))).findings == []
    [f] = analyze_text(text, PATH, now=at(timedelta(days=7))).findings
    assert f.data["reason"] == "session_maximum_age"
    episodic = _record(lane="episodic", retention={"occurred_at": S})
    assert analyze_text(episodic, PATH, now=at(timedelta(days=29))).findings == []
    [f] = analyze_text(episodic, PATH, now=at(timedelta(days=30))).findings
    assert f.data == {"boundary": "2026-07-31T12:00:00Z", "reason": "episodic_ordinary_window"}


def test_explicit_expiry_on_durable_lane():
    text = _record(lane="semantic", retention={"explicit_expires_at": "2026-07-05T00:00:00Z"})
    assert analyze_text(text, PATH, now=datetime(2026, 7, 4, tzinfo=UTC)).findings == []
    [f] = analyze_text(text, PATH, now=datetime(2026, 7, 5, tzinfo=UTC)).findings
    assert f.data["reason"] == "explicit_expiry"


def test_inactive_records_and_invalid_facts_give_no_query_only():
    late = at(timedelta(days=90))
    assert analyze_text(_record(status="superseded"), PATH, now=late).findings == []
    codes = [f.code for f in analyze_text(_record(retention={}), PATH, now=late).findings]
    assert codes == ["invalid_retention"]


_STAMPS = st.sampled_from(
    [
        "2026-07-01T00:00:00Z",
        " 2026-07-03T10:00:00.123456+02:00 ",
        "2026-07-09t00:00:00z",
        "2026-06-20T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-07-01",
        "yesterday",
        "",
    ]
)
_VALUES = st.one_of(st.none(), _STAMPS, st.integers(0, 3), st.just(["2026-07-01T00:00:00Z"]))
_KEYS = st.sampled_from([*retention_rules.RETENTION_FIELDS[:5], "episodic_extension", "colour"])


def _decision(lane: str, facts: object, now: datetime) -> object:
    try:
        return evaluate_retention(lane, facts, now)  # type: ignore[arg-type]
    except InvalidRetention as err:
        return sorted(err.violations)


@given(
    lane=st.sampled_from(["semantic", "procedural", "episodic", "session", "unknown"]),
    facts=st.dictionaries(_KEYS, _VALUES, max_size=4),
    day=st.integers(1, 60),
)
def test_facts_read_without_the_model_are_decided_as_the_model_decides_them(lane, facts, day):
    # plain_facts reads timestamp-only facts without pydantic; whatever it takes, the decision (boundary, state,
    # reason, or the violations) is the one the validated RetentionFacts gives, and what it refuses goes to the model.
    from memzoi.models.common import RetentionFacts

    now = datetime(2026, 6, 1, tzinfo=UTC) + timedelta(days=day)
    try:
        model = RetentionFacts.model_validate(facts)
    except Exception:
        assert retention_rules.plain_facts(facts) is None
        return
    assert _decision(lane, facts, now) == _decision(lane, model, now)
    assert retention_rules.plain_facts(facts) is not None or "colour" in facts or facts.get("episodic_extension")


def test_the_plain_fields_are_the_models():
    from memzoi.models.common import RetentionFacts

    assert retention_rules.RETENTION_FIELDS == tuple(RetentionFacts.model_fields)


def test_a_search_of_records_loads_no_validation_model():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from datetime import UTC, datetime\n"
        "from memzoi.agent import recall\n"
        "from memzoi.judge.retention import current_assertion\n"
        "assert current_assertion('active', 'semantic', {}, datetime.now(UTC)).is_current\n"
        "assert current_assertion('active', 'episodic', {'occurred_at': '2026-07-01T00:00:00Z'}, datetime.now(UTC))\n"
        "print(sorted(m for m in sys.modules if m == 'pydantic' or m.startswith('memzoi.models')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.strip() == "[]"
