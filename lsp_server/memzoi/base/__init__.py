"""Layer 0 of the core (base): Foundations every layer uses: the findings vocabulary (codes, headlines), UTF-8 safety,
the clock, durable guarded writes (fsio, fsutil), the runtime plane's folder, errors and lock, the one freshness rule
of the stores, worker processes, start-up code caches, shipped resources, typed views of frontmatter fields.

May import: base.
"""
