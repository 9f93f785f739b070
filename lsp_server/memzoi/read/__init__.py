"""Layer 1 of the core (read): Bytes to a Document: decoding, framing (BOM, frontmatter, H1, body), the positioned YAML
1.2 reader and its private accelerator, trimming, the cursor's value path, the canonical writer (render) and key-by-
key edits (rewrite).

May import: base, read.
"""
