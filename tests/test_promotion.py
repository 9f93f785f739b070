"""Zuno's promotion policy (reference §5): review, high_confidence at a basis-point threshold, automatic."""

import math

import pytest

from memzoi.base.promotion import PromotionSection, confidence_bp, promotes, threshold_bp
from memzoi.judge.config import parse_config


def test_default_is_review_and_never_promotes():
    policy = parse_config("").config.promotion
    assert policy.mode == "review"
    assert policy.auto_confidence == 0.9
    assert not promotes(policy, 10_000)


def test_high_confidence_applies_only_at_the_configured_threshold():
    # Zuno's test: 0.89 stays pending, 0.90 is applied.
    policy = PromotionSection(mode="high_confidence")
    assert threshold_bp(policy) == 9_000
    assert not promotes(policy, confidence_bp(0.89))
    assert promotes(policy, confidence_bp(0.90))
    assert promotes(policy, confidence_bp(1.0))


def test_automatic_promotes_every_valid_candidate():
    policy = PromotionSection(mode="automatic")
    assert promotes(policy, 0)


@pytest.mark.parametrize("value,bp", [(0.0, 0), (1.0, 10_000), (0.12345, 1235), (0.00005, 1), (0.5, 5000)])
def test_basis_points_round_half_away_from_zero(value, bp):
    assert confidence_bp(value) == bp


@pytest.mark.parametrize("bad", [-0.01, 1.01, math.nan, math.inf])
def test_confidence_outside_unit_interval_is_refused(bad):
    with pytest.raises(ValueError):
        confidence_bp(bad)


def test_config_section_is_read_and_validated():
    loaded = parse_config('[promotion]\nmode = "high_confidence"\nauto_confidence = 0.75\n')
    assert loaded.errors == ()
    assert loaded.config.promotion.mode == "high_confidence"
    assert threshold_bp(loaded.config.promotion) == 7_500
    bad = parse_config('[promotion]\nmode = "yolo"\nauto_confidence = 2\n')
    assert len(bad.errors) == 2
    assert bad.config.promotion.mode == "review"
