"""Memzoi core: formats, validation, safety, revision, workspace and lifecycle for repository memory.

This package never imports pygls or lsprotocol; the language server (``memzoi_lsp``) converts its results.
"""

__version__ = "0.2.0"
