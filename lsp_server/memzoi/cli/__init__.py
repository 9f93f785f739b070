"""The ``memzoi`` command line: one module per command, each exposing ``register(subparsers)``.

A command module imports the core inside the functions that run the command, not at its top: ``memzoi --help``
imports every command module to list it, and ``memzoi COMMAND --help`` must not load what the command needs only
when it runs (pydantic models, the detectors, YAML, SQLite). Words the parser names, such as ``choices``, come from
modules that import nothing heavy (:mod:`memzoi.base.vocabulary`). ``tests/test_startup_imports.py`` keeps it so.

Layer 9 of the core (cli): The memzoi command line: parse arguments, call the layers below, print.

May import: base, read, judge, models, safety, ledger, project, resident, stores, runs, lifecycle, agent, cli.
"""
