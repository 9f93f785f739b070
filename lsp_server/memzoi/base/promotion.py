"""Promotion policy of runtime-plane candidates (Zuno reference §5).

A candidate is a proposed change that never touches the git plane: a private local record proposed over MCP, or a
resident-memory entry. The policy decides whether a *new*, valid candidate is applied at once or waits for a
human. It never applies to git-plane proposal packets: Memzoi's rule is that approval is not application, so a
packet is applied only by an explicit action.

Configured in ``.memzoi/config.toml``:

```toml
[promotion]
mode = "review"          # "review" (default) | "high_confidence" | "automatic"
auto_confidence = 0.9    # threshold of high_confidence, a float in [0, 1]
```

Zuno semantics (``service.rs`` ``PromotionPolicy``): ``review`` leaves every candidate pending;
``high_confidence`` applies a candidate whose confidence in basis points is at least
``round(auto_confidence × 10000)`` (0.89 waits, 0.90 applies at the default); ``automatic`` applies every candidate
that passed validation. Every mode runs the same validation and threat checks first: the policy is consulted only
for candidates that passed them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

PromotionMode = Literal["review", "high_confidence", "automatic"]

BASIS_POINTS = 10_000


class PromotionSection(BaseModel):
    """``[promotion]``: when a valid runtime-plane candidate is applied without a human decision."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    mode: PromotionMode = Field(
        "review",
        description="`review`: every candidate waits for a human; `high_confidence`: candidates whose confidence "
        "is at least `auto_confidence` are applied at once; `automatic`: every valid candidate is applied. "
        "Git-plane proposal packets are never promoted.",
    )
    auto_confidence: float = Field(
        0.9,
        ge=0.0,
        le=1.0,
        description="Threshold of `high_confidence`, a number from 0 to 1 (compared in basis points).",
    )


def confidence_bp(confidence: float) -> int:
    """A confidence in [0, 1] as basis points (0..10000), rounded half away from zero as Rust's ``f64::round``.

    Raises ``ValueError`` for a value outside [0, 1] or not a finite number.
    """
    value = float(confidence)
    if not 0.0 <= value <= 1.0:  # also rejects NaN
        raise ValueError("confidence must be a number from 0 to 1")
    scaled = value * BASIS_POINTS
    return int(scaled + 0.5)  # non-negative, so this is round-half-away-from-zero


def threshold_bp(policy: PromotionSection) -> int:
    """The ``high_confidence`` threshold in basis points: ``round(auto_confidence × 10000)``."""
    return confidence_bp(policy.auto_confidence)


def promotes(policy: PromotionSection, candidate_bp: int) -> bool:
    """Whether a new candidate that passed validation and threat checks is applied at once.

    ``candidate_bp`` is the candidate's confidence in basis points (0..10000).
    """
    if policy.mode == "automatic":
        return True
    if policy.mode == "high_confidence":
        return candidate_bp >= threshold_bp(policy)
    return False
