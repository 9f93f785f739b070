"""``memzoi proposals list|show|apply|reject|route-local`` (SPEC §8): review and resolve pending packets."""

from __future__ import annotations

import argparse

from ..analysis import analyze_path
from ..findings import Severity
from ..ledger import Refusal
from ..lifecycle import apply_proposal, reject_proposal, route_local
from ..lifecycle.common import PENDING, packet_rel
from ..safety.redact import redact, secret_spans
from ..workspace import walk
from ._changes import add_common, emit_json, refuse, require_project, run_write


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``proposals`` and its subcommands."""
    p = sub.add_parser("proposals", help="list, show, apply, reject or route pending proposal packets")
    ps = p.add_subparsers(dest="proposals_command", metavar="SUBCOMMAND", required=True)
    lp = ps.add_parser("list", help="list pending proposals (with what blocks applying them)")
    add_common(lp, actor=False)
    lp.set_defaults(func=run_list)
    sp = ps.add_parser("show", help="show one pending proposal")
    sp.add_argument("packet", metavar="PROPOSAL", help="file id or path of the packet")
    add_common(sp, actor=False)
    sp.set_defaults(func=run_show)
    ap = ps.add_parser("apply", help="apply a pending proposal (one ledgered change)")
    ap.add_argument("packet", metavar="PROPOSAL", help="file id or path of the packet")
    add_common(ap)
    ap.set_defaults(func=lambda a: run_write(a, lambda root, who: apply_proposal(root, a.packet, actor=who)))
    rp = ps.add_parser("reject", help="reject a pending proposal with a reason (one ledgered change)")
    rp.add_argument("packet", metavar="PROPOSAL", help="file id or path of the packet")
    rp.add_argument("--reason", required=True, help="why it is rejected (written into the resolution)")
    add_common(rp)
    rp.set_defaults(func=lambda a: run_write(
        a, lambda root, who: reject_proposal(root, a.packet, reason=a.reason, actor=who)))
    lo = ps.add_parser("route-local", help="turn a pending proposal into a private local record and resolve it")
    lo.add_argument("packet", metavar="PROPOSAL", help="file id or path of the packet")
    add_common(lo)
    lo.set_defaults(func=lambda a: run_write(a, lambda root, who: route_local(root, a.packet, actor=who)))


def _summary(root, path) -> dict:
    analysis = analyze_path(path)
    data = analysis.document.data or {}
    proposal = data.get("proposal") if isinstance(data.get("proposal"), dict) else {}
    rel = path.relative_to(root).as_posix()
    return {
        "id": rel[len(PENDING) + 1 : -3],
        "path": rel,
        "action": proposal.get("action"),
        "title": data.get("title"),
        "sensitivity": data.get("sensitivity"),
        "content_class": data.get("content_class"),
        "blocked_by": sorted({f.code for f in analysis.findings if f.severity == Severity.ERROR}),
        "analysis": analysis,
    }


def run_list(args: argparse.Namespace) -> int:
    """List pending packets, oldest file name first."""
    root = require_project(args)
    if root is None:
        return 2
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
    root = require_project(args)
    if root is None:
        return 2
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
