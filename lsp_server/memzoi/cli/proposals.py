"""``memzoi proposals list|show|apply|reject|route-local`` (SPEC §8): review and resolve pending packets."""

from __future__ import annotations

import argparse

from ._common import add_command, add_group, refuse_linked_plane
from ._changes import add_common, emit_json, project_root, refuse, run_write


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``proposals`` and its subcommands."""
    p = add_command(
        sub, "proposals", help="list, show, apply, reject or route pending proposal packets",
        description="Review pending proposal packets (.memzoi/proposals/pending) and resolve them. Approval is not "
        "application: a packet is applied only by `memzoi proposals apply`.",
        examples=["memzoi proposals list", "memzoi proposals apply prefer-small-pull-requests",
                  "memzoi proposals reject old-idea --reason 'superseded by the new policy'"],
        exits={1: "refused (a blocking finding, a failed precondition, a changed file)"})
    ps = add_group(p, "proposals_command")
    lp = add_command(ps, "list", help="list pending proposals (with what blocks applying them)",
                     description="List the pending proposal packets with their action, title and the error codes "
                     "that block applying them.",
                     examples=["memzoi proposals list", "memzoi proposals list --json"], exits={})
    add_common(lp, actor=False)
    lp.set_defaults(func=run_list)
    sp = add_command(ps, "show", help="show one pending proposal",
                     description="Show one pending packet: its fields, findings and body (detected secrets masked).",
                     examples=["memzoi proposals show prefer-small-pull-requests"],
                     exits={1: "no such pending proposal"})
    sp.add_argument("packet", metavar="PROPOSAL", help="file id or path of the packet")
    add_common(sp, actor=False)
    sp.set_defaults(func=run_show)
    ap = add_command(ps, "apply", help="apply a pending proposal (one ledgered change)",
                     description="Apply a pending proposal: write the record and move the packet to resolved/, as "
                     "one ledgered change that `memzoi undo` can revert.",
                     examples=["memzoi proposals apply prefer-small-pull-requests --actor alice"],
                     exits={1: "refused (a blocking finding, a failed precondition, a changed file)"})
    ap.add_argument("packet", metavar="PROPOSAL", help="file id or path of the packet")
    add_common(ap)
    ap.set_defaults(func=run_apply)
    rp = add_command(ps, "reject", help="reject a pending proposal with a reason (one ledgered change)",
                     description="Reject a pending proposal with a reason; a packet that is not repo-safe is "
                     "archived as Memzoi's redacted hash receipt.",
                     examples=["memzoi proposals reject old-idea --reason 'we keep npm'"],
                     exits={1: "refused (no such pending proposal, a changed file)"})
    rp.add_argument("packet", metavar="PROPOSAL", help="file id or path of the packet")
    rp.add_argument("--reason", required=True, help="why it is rejected (written into the resolution)")
    add_common(rp)
    rp.set_defaults(func=run_reject)
    lo = add_command(ps, "route-local", help="turn a pending proposal into a private local record and resolve it",
                     description="Turn a pending proposal into a private local record (runtime plane) and resolve "
                     "the packet, as one ledgered change.",
                     examples=["memzoi proposals route-local my-private-note"],
                     exits={1: "refused (a secret in the packet, a changed file)"})
    lo.add_argument("packet", metavar="PROPOSAL", help="file id or path of the packet")
    add_common(lo)
    lo.set_defaults(func=run_route_local)


def run_apply(args: argparse.Namespace) -> int:
    """Apply a pending packet."""
    from ..lifecycle import apply_proposal

    return run_write(args, lambda root, who: apply_proposal(root, args.packet, actor=who))


def run_reject(args: argparse.Namespace) -> int:
    """Reject a pending packet."""
    from ..lifecycle import reject_proposal

    return run_write(args, lambda root, who: reject_proposal(root, args.packet, reason=args.reason, actor=who))


def run_route_local(args: argparse.Namespace) -> int:
    """Turn a pending packet into a private local record."""
    from ..lifecycle import route_local

    return run_write(args, lambda root, who: route_local(root, args.packet, actor=who))


def _summary(root, path) -> dict:
    from ..analysis import analyze_path
    from ..findings import Severity
    from ..lifecycle.common import PENDING
    from ..pathsafety import shown_id, shown_path

    analysis = analyze_path(path)
    data = analysis.document.data or {}
    proposal = data.get("proposal") if isinstance(data.get("proposal"), dict) else {}
    rel = path.relative_to(root).as_posix()
    return {
        # printed in every form: a packet named after a credential is shown as Memzoi's redacted marker
        "id": shown_id(rel[len(PENDING) + 1 : -3]),
        "path": shown_path(rel),
        "action": proposal.get("action"),
        "title": data.get("title"),
        "sensitivity": data.get("sensitivity"),
        "content_class": data.get("content_class"),
        "blocked_by": sorted({f.code for f in analysis.findings if f.severity == Severity.ERROR}),
        "analysis": analysis,
    }


def run_list(args: argparse.Namespace) -> int:
    """List pending packets, oldest file name first."""
    from ..lifecycle.common import PENDING
    from ..workspace import walk

    root = project_root(args)
    refused = refuse_linked_plane(args, root)  # never read through a symlinked .memzoi or proposals folder
    if refused is not None:
        return refused
    items = [_summary(root, p) for p in walk(root / PENDING).files]
    if args.json:
        emit_json({"proposals": [{k: v for k, v in i.items() if k != "analysis"} for i in items]})
        return 0
    if not items:
        print("no pending proposals")
    for i in items:
        blocked = f"  [blocked: {', '.join(i['blocked_by'])}]" if i["blocked_by"] else ""
        print(f"{i['id']}  {i['action'] or '?'}  {i['title'] or '(no title)'}{blocked}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    """Show one pending packet: its fields, body and findings."""
    from ..ledger import Refusal
    from ..lifecycle.common import packet_rel
    from ..safety.redact import redact, secret_spans

    root = project_root(args)
    refused = refuse_linked_plane(args, root)  # never read through a symlinked .memzoi or proposals folder
    if refused is not None:
        return refused
    try:
        rel = packet_rel(root, args.packet)
    except Refusal as err:
        return refuse(args, err)
    path = root / rel
    if not path.is_file():
        return refuse(args, Refusal("proposal_not_found", f"{rel}: no such pending proposal", rel))
    info = _summary(root, path)
    analysis = info.pop("analysis")
    findings = [{"code": f.code, "severity": f.severity.label, "message": f.message} for f in analysis.findings]
    # Never print what a detector found: secrets in the body are masked, and the frontmatter is withheld.
    secrets = secret_spans(analysis.findings)
    doc = analysis.document
    body = redact(doc.text, secrets, *doc.body_span) if secrets else doc.body
    if args.json:
        emit_json({**info, "frontmatter": None if secrets else doc.data, "body": body, "findings": findings})
        return 0
    print(f"{info['id']} ({info['action'] or '?'}): {info['title'] or '(no title)'}")
    print(f"  path: {info['path']}\n  sensitivity: {info['sensitivity']}  content_class: {info['content_class']}")
    for f in findings:
        print(f"  {f['severity']}: {f['code']} {f['message']}")
    print()
    print(body)
    return 0
