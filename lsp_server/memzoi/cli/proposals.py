"""``memzoi proposals list|show|apply|reject|route-local`` (SPEC §8): review and resolve pending packets."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.printable import printable, printable_block
from ._changes import add_common, emit_json, project_root, refuse, run_write
from ._common import add_command, add_group, refuse_linked_plane

if TYPE_CHECKING:  # the listing type only: the lifecycle loads when a command runs
    from ..lifecycle.pending import PendingPacket


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``proposals`` and its subcommands."""
    p = add_command(
        sub,
        "proposals",
        help="list, show, apply, reject or route pending proposal packets",
        description="Review pending proposal packets (.memzoi/proposals/pending) and resolve them. Approval is not "
        "application: a packet is applied only by `memzoi proposals apply`.",
        examples=[
            "memzoi proposals list",
            "memzoi proposals apply prefer-small-pull-requests",
            "memzoi proposals reject old-idea --reason 'superseded by the new policy'",
        ],
        exits={1: "refused (a blocking finding, a failed precondition, a changed file)"},
    )
    ps = add_group(p, "proposals_command")
    lp = add_command(
        ps,
        "list",
        help="list pending proposals (with what blocks applying them)",
        description="List the pending proposal packets with their action, title and every code that "
        "blocks applying them (the can-apply rule of the editor and `proposals apply`).",
        examples=["memzoi proposals list", "memzoi proposals list --json"],
        exits={},
    )
    add_common(lp, actor=False)
    lp.set_defaults(func=run_list)
    sp = add_command(
        ps,
        "show",
        help="show one pending proposal",
        description="Show one pending packet: its fields, findings and body (detected secrets masked).",
        examples=["memzoi proposals show prefer-small-pull-requests"],
        exits={1: "no such pending proposal"},
    )
    sp.add_argument("packet", metavar="PROPOSAL", help="file id or path of the packet")
    add_common(sp, actor=False)
    sp.set_defaults(func=run_show)
    ap = add_command(
        ps,
        "apply",
        help="apply a pending proposal (one ledgered change)",
        description="Apply a pending proposal: write the record and move the packet to resolved/, as "
        "one ledgered change that `memzoi undo` can revert.",
        examples=["memzoi proposals apply prefer-small-pull-requests --actor alice"],
        exits={1: "refused (a blocking finding, a failed precondition, a changed file)"},
    )
    ap.add_argument("packet", metavar="PROPOSAL", help="file id or path of the packet")
    add_common(ap)
    ap.set_defaults(func=run_apply)
    rp = add_command(
        ps,
        "reject",
        help="reject a pending proposal with a reason (one ledgered change)",
        description="Reject a pending proposal with a reason; a packet that is not repo-safe is "
        "archived as Memzoi's redacted hash receipt.",
        examples=["memzoi proposals reject old-idea --reason 'we keep npm'"],
        exits={1: "refused (no such pending proposal, a changed file)"},
    )
    rp.add_argument("packet", metavar="PROPOSAL", help="file id or path of the packet")
    rp.add_argument("--reason", required=True, help="why it is rejected (written into the resolution)")
    add_common(rp)
    rp.set_defaults(func=run_reject)
    lo = add_command(
        ps,
        "route-local",
        help="turn a pending proposal into a private local record and resolve it",
        description="Turn a pending proposal into a private local record (runtime plane) and resolve "
        "the packet, as one ledgered change.",
        examples=["memzoi proposals route-local my-private-note"],
        exits={1: "refused (a secret in the packet, a changed file)"},
    )
    lo.add_argument("packet", metavar="PROPOSAL", help="file id or path of the packet")
    add_common(lo)
    lo.set_defaults(func=run_route_local)


def run_apply(args: argparse.Namespace) -> int:
    """Apply a pending packet."""
    from ..lifecycle import apply_proposal  # noqa: PLC0415 lazy: start-up

    return run_write(args, lambda root, who: apply_proposal(root, args.packet, actor=who))


def run_reject(args: argparse.Namespace) -> int:
    """Reject a pending packet."""
    from ..lifecycle import reject_proposal  # noqa: PLC0415 lazy: start-up

    return run_write(args, lambda root, who: reject_proposal(root, args.packet, reason=args.reason, actor=who))


def run_route_local(args: argparse.Namespace) -> int:
    """Turn a pending packet into a private local record."""
    from ..lifecycle import route_local  # noqa: PLC0415 lazy: start-up

    return run_write(args, lambda root, who: route_local(root, args.packet, actor=who))


def _pending(args: argparse.Namespace, root: Path) -> list[PendingPacket] | int:
    """Every pending packet as listings show them (:mod:`memzoi.lifecycle.pending`), or an exit code."""
    from ..agent.pending_read import listed_packets  # noqa: PLC0415 lazy: start-up
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up

    refused = refuse_linked_plane(args, root)  # never read through a symlinked .memzoi or proposals folder
    if refused is not None:
        return refused
    try:
        packets, warning = listed_packets(root)
    except Refusal as err:
        return refuse(args, err)
    if warning:
        print(f"memzoi: {warning}", file=sys.stderr)
    return packets


def run_list(args: argparse.Namespace) -> int:
    """List pending packets, oldest file name first, each with what blocks applying it."""
    items = _pending(args, project_root(args))
    if isinstance(items, int):
        return items
    if args.json:
        emit_json({"proposals": [i.to_json() for i in items]})
        return 0
    if not items:
        print("no pending proposals")
    for i in items:
        codes = i.readiness.codes()
        blocked = f"  [blocked: {', '.join(codes)}]" if codes else ""
        # ids and titles come from committed file names and frontmatter: escaped so none drives the terminal
        print(printable(f"{i.id}  {i.action or '?'}  {i.shown_title}{blocked}"))
        for b in i.readiness.held:  # no change of the packet can run, a reject included: say why and what to run
            print(printable(f"    {b.code}: {b.message}"))
        details = i.details()
        if details:
            print(printable(f"    {'; '.join(details)}"))
    return 0


def run_show(args: argparse.Namespace) -> int:
    """Show one pending packet: its fields, body and findings (its verdict as apply judges it)."""
    from ..judge.analysis import analyze_path  # noqa: PLC0415 lazy: start-up
    from ..judge.pathsafety import shown_path  # noqa: PLC0415 lazy: start-up
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.apply import packet_findings  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.common import packet_rel  # noqa: PLC0415 lazy: start-up
    from ..safety.redact import redact, secret_spans  # noqa: PLC0415 lazy: start-up

    root = project_root(args)
    refused = refuse_linked_plane(args, root)
    if refused is not None:
        return refused
    try:
        rel = packet_rel(root, args.packet)
    except Refusal as err:
        return refuse(args, err)
    path = root / rel
    if not path.is_file():
        return refuse(args, Refusal("proposal_not_found", f"{rel}: no such pending proposal", rel))
    items = _pending(args, root)
    if isinstance(items, int):
        return items
    row = next((i for i in items if i.path == shown_path(rel)), None)
    if row is None:
        return refuse(args, Refusal("proposal_not_found", f"{rel}: no such pending proposal", rel))
    analysis = analyze_path(path)
    verdict = packet_findings(root, rel, analysis)
    findings = [{"code": f.code, "severity": f.severity.label, "message": f.message} for f in verdict]
    # Never print what a detector found: secrets in the body are masked, and the frontmatter is withheld.
    secrets = secret_spans(analysis.findings)
    doc = analysis.document
    body = redact(doc.text, secrets, *doc.body_span) if secrets else doc.body
    if args.json:
        emit_json({**row.to_json(), "frontmatter": None if secrets else doc.data, "body": body, "findings": findings})
        return 0
    print(printable(f"{row.id} ({row.action or '?'}): {row.shown_title}"))
    print(printable(f"  path: {row.path}"))
    print(printable(f"  sensitivity: {row.sensitivity}  content_class: {row.content_class}"))
    for line in row.details():
        print(printable(f"  {line}"))
    print(printable(f"  can be applied: {row.readiness.statement()}"))
    for f in findings:
        print(printable(f"  {f['severity']}: {f['code']} {f['message']}"))
    print()
    print(printable_block(body))
    return 0
