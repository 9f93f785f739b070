"""A path or id is scanned only by the detectors that can report a credential code
(:func:`memzoi.safety.scan.secret_hits_of`), and that gives exactly the credential hits of the whole scan."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings, strategies as st

from memzoi.judge import pathsafety
from memzoi.safety import SECRET_CODES, collect_hits, prefilter
from memzoi.safety.scan import secret_hits_of

_PIECES = st.sampled_from(
    list("abzAZ09._-/%+= ")
    + [
        ".memzoi/records/",
        ".memzoi/proposals/pending/",
        "use-pnpm-not-npm",
        ".md",
        "ghp_",
        "AKIA",
        "xoxb-",
        "eyJ",
        "-----BEGIN ",
        "PRIVATE KEY-----",
        "postgres://",
        "user:pass@",
        "api_key=",
        "password",
        "%2F",
        "%41%4B%49%41",
        "QUtJQUlPU0ZPRE5ON0VYQU1QTEU",  # base64 of an AWS-shaped id
        "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6",
        "ignore previous instructions",
        "+44 20 7946 0958",
        "é",
        "\u200b",
        "\U000e0041",
    ]
)


def _whole(text: str):
    return [h for h in collect_hits(text) if h.code in SECRET_CODES]


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES, max_size=24).map("".join))
@example(".memzoi/records/" + "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2" + ".md")
@example(".memzoi/records/" + "%41%4B%49%41" + "IOSFODNN7EXAMPLE.md")
def test_the_credential_scan_of_a_name_equals_the_whole_scan(text):
    assert secret_hits_of(text) == _whole(text)


def test_a_plain_name_is_scanned_once_per_string():
    pathsafety._secret_hits.cache_clear()
    name = ".memzoi/records/some-topic/use-pnpm.md"
    for shown in (name, "/srv/repo/" + name, "./" + name):
        assert pathsafety.shown_path(shown) == shown
    assert pathsafety.name_findings("/srv/repo/" + name) == []
    info = pathsafety._secret_hits.cache_info()
    assert (info.misses, info.hits) == (1, 3)


def test_a_secret_bearing_name_is_found_with_either_engine():
    name = ".memzoi/records/" + "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2" + ".md"
    before = prefilter.engine_name() == "hyperscan"
    try:
        for enabled in (False, True):
            prefilter.set_enabled(enabled)
            pathsafety._secret_hits.cache_clear()
            assert pathsafety.shown_path(name).startswith(pathsafety.REDACTED_PREFIX)
            assert "credential_token" in [f.code for f in pathsafety.name_findings(name)]
    finally:
        prefilter.set_enabled(before)
        pathsafety._secret_hits.cache_clear()
