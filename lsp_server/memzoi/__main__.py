"""``python -m memzoi`` runs the command line."""

from .cli.main import entry

entry()
