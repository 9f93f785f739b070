"""Memzoi's admission refusals of a git-plane file, in Memzoi's check order (reference §4.3,
``service/derived_index/admission.rs@164dcd6b``): the refusal code each finding implies (``typed-record``,
``canonical-path``, ``scope-not-repository`` … ``review-visibility``, and one ``safety-scan[…]`` for the gate and
detector errors). The checks that produce the findings: :mod:`memzoi.project.admission`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..base.findings import ADMISSION_REFUSALS, CODES, Finding

if TYPE_CHECKING:
    from ..judge.rules import Rules

_REFUSAL = ADMISSION_REFUSALS
_ORDER = [
    "typed-record",
    "canonical-path",
    "canonical-path-id",
    "scope-not-repository",
    "visibility-not-repository",
    "materialization-metadata",
    "materialization-revision",
    "safety-scan",
    "ignored-untracked",
    "review-visibility",
]


def refusals(findings: Iterable[Finding]) -> list[str]:
    """Memzoi admission refusal codes implied by a record's findings, in Memzoi's check order.

    Error-severity framing/schema findings mean the record does not parse (``typed-record``); gate and
    detector errors other than scope/visibility become one ``safety-scan[c1,c2,c3]`` (at most three codes).
    Warnings and information never refuse.
    """
    found: set[str] = set()
    scan: list[str] = []
    for f in findings:
        if f.severity != 1:
            continue
        if f.code in _REFUSAL:
            found.add(_REFUSAL[f.code])
            continue
        group = CODES.get(f.code, (None, ""))[1]
        if group in ("framing", "schema"):
            found.add("typed-record")
        elif group in ("gate", "detector") and f.code not in scan:
            scan.append(f.code)
    out = [c for c in _ORDER if c in found]
    if scan:
        out.insert(_insert_at(out), "safety-scan[" + ",".join(sorted(scan)[:3]) + "]")
    return out


def configured(findings: Sequence[Finding], rules: Rules, rel: str | None) -> list[Finding]:
    """``findings`` of the file at ``rel`` (relative to the ``.memzoi`` folder) as :func:`refusals` should see them
    under the project's ``rules``, so that ``memzoi rebuild``/``export`` and ``memzoi check`` give one verdict: our
    own refinements (``prompt_injection``, ``invisible_character``, ``pii_detected``, ``transcript_detected``) are
    graded as ``check`` grades them (disabled, downgraded or in an ignored file: no refusal). What Memzoi refuses is
    never graded (:data:`memzoi.base.findings.UNSUPPRESSIBLE`, framing and schema errors included:
    :data:`~memzoi.base.findings.UNTYPED`), and framing and schema findings are kept as found: for the errors that
    changes nothing, but a default-warning one (``bom``, ``legacy_profile`` …) that ``[rules]`` raises to error
    fails ``check`` while Memzoi still types the file, so it never becomes a ``typed-record`` refusal."""
    parse: list[Finding] = []
    rest: list[Finding] = []
    for f in findings:
        (parse if CODES.get(f.code, (None, ""))[1] in ("framing", "schema") else rest).append(f)
    return parse + rules.apply(rest, rel) if rest else parse


def _insert_at(out: list[str]) -> int:
    rank = _ORDER.index("safety-scan")
    return sum(1 for c in out if _ORDER.index(c) < rank)
