"""``python -m memzoi_mcp`` runs the server (same as the ``memzoi-mcp`` console script)."""

import sys

from .server import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
