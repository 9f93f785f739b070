"""Our detectors on the labelled evaluation set: the Memzoi floor, per-code recall and precision floors, and the
coverage of Memzoi's rule alternatives.

The per-code floors are what the detectors achieve on this set across several generator seeds (the set was built
alongside the detectors, so these are regression floors, not an independent estimate). The Memzoi floor is not a
ratio: every snippet Memzoi's gate refuses must get an error with each of its reason codes."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from memzoi.safety.memzoi_source import MEMZOI_PATTERNS, alternatives, rust_to_python

from . import reference
from .evaluate import ALL_CODES, floor, labelled, our_codes, score
from .memzoi_cases import cases, unicode_cases

FLOORS = {code: (0.95, 0.95) for code in ALL_CODES}  # (precision, recall)


def test_set_size():
    data = labelled()
    positives = [s for s in data if s[1]]
    negatives = [s for s in data if not s[1]]
    assert len(positives) >= 300 and len(negatives) >= 280
    assert {c for s in positives for c in s[1].split("+")} == set(ALL_CODES)


@pytest.mark.parametrize("seed", [20261130, 2, 3])
def test_per_code_floors(seed):
    scores, _ = score(labelled(seed))
    for code in ALL_CODES:
        s = scores[code]
        p_floor, r_floor = FLOORS[code]
        assert s.recall >= r_floor, (code, s.recall, s.fn_notes)
        assert s.precision >= p_floor, (code, s.precision, s.fp_notes)


@pytest.mark.parametrize("seed", [20261130, 2, 3])
def test_everything_memzoi_refuses_is_an_error_with_its_codes(seed):
    refused, reported, misses = floor(labelled(seed))
    assert refused >= 200 and reported == refused, misses


_EXPECTED = {
    "private_key": 8,
    "authorization_header": 4,
    "known_credential_prefix": 18,
    "jwt": 1,
    "cookie_or_session": 8,
    "connection_string": 9,
    "environment_secret": 14,
    "cloud_service_account": 4,
    "credentialed_url": 16,
    "bounded_entropy": 4,
}


def test_every_memzoi_alternative_has_a_positive_and_a_near_miss():
    all_cases = cases()
    assert Counter(c.detector for c in all_cases) == _EXPECTED
    assert len({(c.detector, c.alternative) for c in all_cases}) == len(all_cases)
    for c in all_cases:
        assert c.detector in reference.detectors(c.positive), c
        assert not reference.detectors(c.near_miss), c  # clean for Memzoi …
        assert not our_codes(c.near_miss), c  # … and for us
        assert c.code in our_codes(c.positive, errors_only=True), c


def test_every_top_level_alternative_of_every_pattern_is_exercised():
    # each alternative of Memzoi's source, compiled alone with its flags, matches some case's positive
    positives = [c.positive for c in cases()]
    for name, _, source in MEMZOI_PATTERNS:
        flags = re.match(r"^\(\?[a-z]+\)", source)
        for alt in alternatives(source):
            rx = re.compile((flags.group(0) if flags else "") + rust_to_python(alt))
            assert any(rx.search(p) for p in positives), (name, alt)


def test_unicode_cases():
    for text, code, note in unicode_cases():
        want = set(code.split("+")) if code else set()
        assert our_codes(text) == want, note
