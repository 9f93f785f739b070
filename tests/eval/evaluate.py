"""Precision and recall of the content detectors on the labelled snippets, side by side with detect-secrets.

``python -m tests.eval.evaluate [-v]`` prints:

1. per code: positives, true positives, false positives, precision and recall of our detectors;
2. the floor: of the snippets Memzoi's gate refuses (:mod:`.reference`, an independent reading of its rules),
   how many get an error with each of Memzoi's reason codes, and how many Memzoi rule alternatives
   (:mod:`.memzoi_cases`) have a positive and a near-miss;
3. a side-by-side table of our detectors and detect-secrets (``pip install -e '.[bench]'``) on the same snippets:
   recall on the credential positives, false positives on the clean snippets, and time.

The truth of a snippet is its label (what a careful reviewer says it holds) plus the codes Memzoi's gate gives it:
whatever Memzoi refuses must be reported. A snippet counts as flagged by a code when a finding of that code has
error or warning severity (information-level findings, e.g. an unsigned example JWT, do not count).
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field

from memzoi.base.findings import Severity
from memzoi.safety import collect_hits

from . import reference
from .dataset import Snippet, snippets
from .memzoi_cases import cases, unicode_cases

SECRET_CODES = (
    "credential_token",
    "private_key",
    "authorization_header",
    "credentialed_url",
    "connection_string",
    "session_token",
    "cloud_credential",
    "environment_secret",
    "high_entropy_value",
)
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


def labelled(seed: int = 20261130) -> list[Snippet]:
    """The evaluation set: :func:`.dataset.snippets`, every Memzoi alternative's positive and near-miss, and the
    Unicode cases."""
    alt: list[Snippet] = []
    for c in cases(seed):
        alt.append((c.positive, c.code, f"Memzoi {c.detector}: {c.alternative}"))
        alt.append((c.near_miss, None, f"near-miss of Memzoi {c.detector}: {c.alternative}"))
    return snippets(seed) + alt + unicode_cases()


def truth(text: str, label: str | None) -> set[str]:
    """The codes ``text`` must get: its label's and Memzoi's."""
    return (set(label.split("+")) if label else set()) | reference.codes(text)


def our_codes(text: str, *, errors_only: bool = False) -> set[str]:
    """Codes our detectors report on ``text`` at warning severity or above (at error severity: ``errors_only``)."""
    worst = Severity.ERROR if errors_only else Severity.WARNING
    return {h.code for h in collect_hits(text) if h.severity is None or h.severity <= worst}


def score(data: list[Snippet]) -> tuple[dict[str, Score], float]:
    """Per-code scores of our detectors and the elapsed seconds for scanning all snippets."""
    scores: dict[str, Score] = defaultdict(Score)
    start = time.perf_counter()
    predicted = [our_codes(text) for text, _, _ in data]
    elapsed = time.perf_counter() - start
    for (text, label, note), got in zip(data, predicted):
        want = truth(text, label)
        for code in want:
            scores[code].positives += 1
            if code in got:
                scores[code].tp += 1
            else:
                scores[code].fn_notes.append(note)
        for c in got - want:
            scores[c].fp += 1
            scores[c].fp_notes.append(f"{note} (labelled {label or 'negative'})")
    return scores, elapsed


def floor(data: list[Snippet]) -> tuple[int, int, list[str]]:
    """``(refused, reported, misses)``: snippets Memzoi's gate refuses, how many of them get an error with every
    code Memzoi gives, and the notes of the others."""
    refused = reported = 0
    misses: list[str] = []
    for text, _, note in data:
        memzoi = reference.codes(text)
        if not memzoi:
            continue
        refused += 1
        if memzoi <= our_codes(text, errors_only=True):
            reported += 1
        else:
            misses.append(note)
    return refused, reported, misses


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


def side_by_side(data: list[Snippet], name: str) -> list[str]:
    """Rows of the comparison table on ``data``: recall on snippets whose truth has a credential code, false
    positives (any credential code, resp. any finding) on snippets whose truth is empty, and time."""
    secret = [i for i, (t, c, _) in enumerate(data) if truth(t, c) & set(SECRET_CODES)]
    clean = [i for i, (t, c, _) in enumerate(data) if not truth(t, c)]
    start = time.perf_counter()
    ours = [bool(our_codes(t) & set(SECRET_CODES)) for t, _, _ in data]
    ours_s = time.perf_counter() - start
    rows = [
        f"| {name} | memzoi-lsp | {sum(ours[i] for i in secret)}/{len(secret)} "
        f"({sum(ours[i] for i in secret) / max(1, len(secret)):.3f}) | {sum(ours[i] for i in clean)}/{len(clean)} "
        f"| {ours_s * 1000:.0f} ms |"
    ]
    ds = detect_secrets_flags(data)
    if ds is None:
        rows.append(f"| {name} | detect-secrets | not installed (pip install -e '.[bench]') | | |")
    else:
        flags, ds_s = ds
        rows.append(
            f"| {name} | detect-secrets | {sum(flags[i] for i in secret)}/{len(secret)} "
            f"({sum(flags[i] for i in secret) / max(1, len(secret)):.3f}) | {sum(flags[i] for i in clean)}/{len(clean)} "
            f"| {ds_s * 1000:.0f} ms |"
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    data = labelled()
    pos = sum(1 for t, c, _ in data if truth(t, c))
    print(f"{len(data)} snippets: {pos} with something to report, {len(data) - pos} clean\n")
    scores, elapsed = score(data)
    print(f"{'code':24} {'pos':>4} {'tp':>4} {'fp':>4} {'precision':>10} {'recall':>8}")
    for code in ALL_CODES:
        s = scores[code]
        print(f"{code:24} {s.positives:4} {s.tp:4} {s.fp:4} {s.precision:10.3f} {s.recall:8.3f}")
    refused, reported, misses = floor(data)
    alts = cases()
    regex_alts = [c for c in alts if "skip" not in c.alternative and "example" not in c.alternative]
    print(f"\nfloor: {reported}/{refused} snippets that Memzoi's gate refuses get an error with each of its codes")
    print(
        f"Memzoi rule alternatives with a positive and a near-miss: {len(regex_alts)} regex alternatives "
        f"(+{len(alts) - len(regex_alts)} cases of its skips and AWS's example key id) over "
        f"{len({c.detector for c in alts})} detectors"
    )
    if "-v" in argv:
        for n in misses:
            print(f"  floor miss: {n}")
        for code in ALL_CODES:
            for n in scores[code].fn_notes:
                print(f"  missed {code}: {n}")
            for n in scores[code].fp_notes:
                print(f"  false {code}: {n}")
    print("\n| set | scanner | recall (credential positives) | false positives (clean snippets) | time |")
    print("| --- | --- | --- | --- | --- |")
    alt_data = [s for s in data if s[2].startswith(("Memzoi ", "near-miss of Memzoi "))]
    for row in side_by_side(data, "all snippets") + side_by_side(alt_data, "Memzoi alternatives"):
        print(row)
    print(
        f"\n(our time for all {len(data)} snippets and all 13 detectors in the per-code pass: {elapsed * 1000:.0f} ms)"
    )
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
