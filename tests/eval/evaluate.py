"""Precision and recall of the content detectors on the labelled snippets, side by side with detect-secrets.

``python -m tests.eval.evaluate`` prints, per code: positives, true positives, false positives, precision and
recall of our detectors; then detect-secrets (when installed: ``pip install -e '.[bench]'``) on the same
snippets: its recall per code (did it report anything on the snippet) and its overall precision on the
hard negatives; then throughput of both in snippets per second. detect-secrets has no prompt-injection,
invisible-character, PII or transcript detection, so only the credential codes are compared.

A snippet counts as flagged by a code when a finding of that code has error or warning severity
(information-level findings, e.g. an unsigned example JWT, do not count).
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field

from memzoi.findings import Severity
from memzoi.safety import collect_hits

from .dataset import Snippet, snippets

SECRET_CODES = ("credential_token", "private_key", "authorization_header", "credentialed_url", "connection_string",
                "session_token", "cloud_credential", "environment_secret", "high_entropy_value")
ALL_CODES = SECRET_CODES + ("prompt_injection", "invisible_character", "pii_detected", "transcript_detected")


@dataclass
class Score:
    """Counts for one code."""

    positives: int = 0
    tp: int = 0
    fp: int = 0
    fp_notes: list[str] = field(default_factory=list)
    fn_notes: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / self.positives if self.positives else 1.0


def our_codes(text: str) -> set[str]:
    """Codes our detectors report on ``text`` at warning severity or above."""
    return {h.code for h in collect_hits(text) if h.severity is None or h.severity <= Severity.WARNING}


def score(data: list[Snippet]) -> tuple[dict[str, Score], float]:
    """Per-code scores of our detectors and the elapsed seconds for scanning all snippets."""
    scores: dict[str, Score] = defaultdict(Score)
    start = time.perf_counter()
    predicted = [our_codes(text) for text, _, _ in data]
    elapsed = time.perf_counter() - start
    for (text, label, note), got in zip(data, predicted):
        allowed = set(label.split("+")) if label else set()
        code = label.split("+")[0] if label else None
        if code is not None:
            scores[code].positives += 1
            if code in got:
                scores[code].tp += 1
            else:
                scores[code].fn_notes.append(note)
        for c in got - allowed:
            scores[c].fp += 1
            scores[c].fp_notes.append(f"{note} (labelled {label or 'negative'})")
    return scores, elapsed


def detect_secrets_flags(data: list[Snippet]) -> tuple[list[bool], float] | None:
    """For each snippet, whether detect-secrets (default plugins) reports anything; ``None`` when it is not
    installed. Also the elapsed seconds."""
    try:
        from detect_secrets.core import scan
        from detect_secrets.settings import default_settings
    except ImportError:
        return None
    # The line-based scan with the default plugins and filters, as `detect-secrets scan` runs it on a file
    # (``scan_line`` would be the ad-hoc string mode, which skips the filters and entropy limits).
    process = scan._process_line_based_plugins
    flags = []
    with default_settings():
        start = time.perf_counter()
        for text, _, _ in data:
            lines = list(enumerate(text.splitlines(), start=1))
            flags.append(any(True for _ in process(lines=lines, filename="snippet.md")))
        elapsed = time.perf_counter() - start
    return flags, elapsed


def main(argv: list[str] | None = None) -> int:
    data = snippets()
    pos = sum(1 for _, c, _ in data if c)
    print(f"{len(data)} snippets: {pos} positive, {len(data) - pos} hard negatives\n")
    scores, elapsed = score(data)
    print(f"{'code':24} {'pos':>4} {'tp':>4} {'fp':>4} {'precision':>10} {'recall':>8}")
    for code in ALL_CODES:
        s = scores[code]
        print(f"{code:24} {s.positives:4} {s.tp:4} {s.fp:4} {s.precision:10.3f} {s.recall:8.3f}")
    secret_pos = [(t, c, n) for t, c, n in data if c in SECRET_CODES]
    negs = [(t, c, n) for t, c, n in data if c is None]
    ours_any_tp = sum(1 for t, _, _ in secret_pos if our_codes(t) & set(SECRET_CODES))
    ours_any_fp = sum(1 for t, _, _ in negs if our_codes(t) & set(SECRET_CODES))
    print(f"\nmemzoi (credential codes, any code counts): recall {ours_any_tp / len(secret_pos):.3f}, "
          f"false positives on {ours_any_fp}/{len(negs)} hard negatives, "
          f"precision {ours_any_tp / max(1, ours_any_tp + ours_any_fp):.3f}")
    if "-v" in (argv or sys.argv[1:]):
        for code in ALL_CODES:
            for n in scores[code].fn_notes:
                print(f"  missed {code}: {n}")
            for n in scores[code].fp_notes:
                print(f"  false {code}: {n}")
    ds = detect_secrets_flags(data)
    if ds is None:
        print("\ndetect-secrets is not installed (pip install -e '.[bench]'); skipping the comparison")
        print(f"\nthroughput: memzoi {len(data) / elapsed:,.0f} snippets/s")
        return 0
    flags, ds_elapsed = ds
    print("\ndetect-secrets on the same snippets (recall = reported anything on a positive of that code):")
    print(f"{'code':24} {'pos':>4} {'tp':>4} {'recall':>8}")
    by_code: dict[str, list[bool]] = defaultdict(list)
    for (_, label, _), flag in zip(data, flags):
        code = label.split("+")[0] if label else None
        if code in SECRET_CODES:
            by_code[code].append(flag)
    for code in SECRET_CODES:
        got = by_code[code]
        print(f"{code:24} {len(got):4} {sum(got):4} {sum(got) / max(1, len(got)):8.3f}")
    ds_tp = sum(f for (_, c, _), f in zip(data, flags) if c in SECRET_CODES)
    ds_fp = sum(f for (_, c, _), f in zip(data, flags) if c is None)
    print(f"\ndetect-secrets (any finding): recall {ds_tp / len(secret_pos):.3f}, false positives on {ds_fp}/{len(negs)} "
          f"hard negatives, precision {ds_tp / max(1, ds_tp + ds_fp):.3f}")
    print(f"\nthroughput: memzoi {len(data) / elapsed:,.0f} snippets/s (all 13 detectors), "
          f"detect-secrets {len(data) / ds_elapsed:,.0f} snippets/s")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
