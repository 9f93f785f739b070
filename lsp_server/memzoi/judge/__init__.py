"""Layer 2 of the core (judge = models = safety): One file's analysis: placement, legacy profiles, schema validation,
attestation and its revision, retention, the git-plane gate (policy), secret-bearing path names, the per-file
exception barrier, the project configuration and its [rules] grading.

May import: base, read, judge, models, safety.
"""
