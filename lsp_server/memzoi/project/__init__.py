"""Layer 4 of the core (project = resident): A file among the project's files: admission (canonical path, git
visibility), git facts, cross-file facts and findings, the path walk, and the one verdict (verdict.local/settle).

May import: base, read, judge, models, safety, ledger, project, resident.
"""
