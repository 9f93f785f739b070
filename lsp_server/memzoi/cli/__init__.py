"""The ``memzoi`` command line: one module per command, each exposing ``register(subparsers)``."""
