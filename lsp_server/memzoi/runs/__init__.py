"""Layer 6 of the core (runs): Multi-file runs over a project: memzoi check (planning, worker stages, settling, its
report and replay), the language server's scan and project state, doctor.

May import: base, read, judge, models, safety, ledger, project, resident, stores, runs.
"""
