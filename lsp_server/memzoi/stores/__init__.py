"""Layer 5 of the core (stores): The project's stores in the runtime plane: the project store, the index (schema, rows,
queries, freshness), the verdict cache (entries, payloads, the tool stamp), and the one carrier of a
file's first stage with its store entry.

May import: base, read, judge, models, safety, ledger, project, resident, stores.
"""
