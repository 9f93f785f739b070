"""The one rule for echoing what a caller gave (:mod:`memzoi.safety.redact`): a secret a detector finds in the
arguments is ``[redacted]`` wherever an answer repeats it, in strings and keys of a JSON tree; plain arguments
leave the answer as it is (the same object)."""

from __future__ import annotations

from memzoi.safety.redact import MARK, given_secrets, scrub_echoes

from ..canaries import assert_not_in, canary


def test_a_secret_argument_is_redacted_wherever_it_is_echoed():
    secret = canary()
    args = {"query": f"find {secret}", "paths": [f"src/{secret}.py"], "limit": 3}
    found = given_secrets(args)
    assert found  # (never printed: it holds the canary)
    answer = {"query": f"find {secret}", secret: [f"src/{secret}.py", 1], "n": None}
    out = scrub_echoes(answer, found)
    assert_not_in(repr(out), secret)
    assert out["query"] == f"find {MARK}" and out["n"] is None
    assert MARK in out[MARK][0] and out[MARK][1] == 1


def test_plain_arguments_leave_the_answer_alone():
    answer = {"query": "refresh lock"}
    assert given_secrets({"query": "refresh lock", "id": "facts/build-tool"}) == []
    assert scrub_echoes(answer, []) is answer
