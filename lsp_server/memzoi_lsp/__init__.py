"""memzoi-lsp: the Memzoi language server (protocol glue over the ``memzoi`` core; see ``server.py``)."""

from memzoi import __version__

__all__ = ["__version__"]
