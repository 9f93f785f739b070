"""Pydantic models of Memzoi's current on-disk profile; the JSON Schemas in ``schemas/`` are generated from them.

Layer 2 of the core (judge = models = safety): Pydantic models of Memzoi's current profile, and the JSON Schemas
generated from them.

May import: base, read, judge, models, safety.
"""

from .common import Lineage, Origin, RetentionFacts, validate_retention
from .proposal import PendingProposal, ResolvedProposal, proposal_rule_violations
from .record import RecordFrontmatter

__all__ = [
    "Lineage",
    "Origin",
    "PendingProposal",
    "RecordFrontmatter",
    "ResolvedProposal",
    "RetentionFacts",
    "proposal_rule_violations",
    "validate_retention",
]
