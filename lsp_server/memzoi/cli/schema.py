"""``memzoi schema [NAME]``: print one of the JSON Schemas the package ships (generated from the core's models)."""

from __future__ import annotations

import argparse
import sys

from ._common import add_command


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``schema``."""
    p = add_command(
        sub,
        "schema",
        help="print a JSON Schema of a Memzoi file format (record, proposal, config, …)",
        description="Print the JSON Schema NAME as shipped with the package (its $id is the stable URN "
        "urn:memzoi-lsp:schema:NAME), or list the names. Editors and validators can use the printed file.",
        examples=["memzoi schema record > record.schema.json", "memzoi schema config", "memzoi schema"],
        exits={1: "the schemas are missing from this installation", 2: "usage error (an unknown NAME)"},
        project="none",
    )
    p.add_argument("name", nargs="?", metavar="NAME", help="schema name (default: list the names)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the schema or the names."""
    from ..base.resources import schema_names, shipped  # noqa: PLC0415 lazy: start-up

    names = schema_names()
    if not names:
        print("memzoi: the JSON Schemas are missing from this installation; reinstall memzoi-lsp", file=sys.stderr)
        return 1
    if args.name is None:
        print("\n".join(names))
        return 0
    name = args.name.removesuffix(".json").removesuffix(".schema")
    path = shipped("schemas", f"{name}.schema.json")
    if path is None:
        print(f"memzoi: no schema named `{args.name}`; one of: {', '.join(names)}", file=sys.stderr)
        return 2
    sys.stdout.write(path.read_text(encoding="utf-8"))
    return 0
