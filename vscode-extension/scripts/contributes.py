"""Regenerate `contributes` in vscode-extension/package.json from the extension's command table and the server's
settings (memzoi_lsp.settings.Settings, memzoi.base.findings.CODES). Run from the repository root:

    .venv/bin/python vscode-extension/scripts/contributes.py [--check]

With --check it exits 1 (printing the difference) when package.json is out of date; tests/editors runs that.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from pathlib import Path

from memzoi.base.findings import CODES, UNSUPPRESSIBLE
from memzoi_lsp.settings import Settings, wire_name

EXT = Path(__file__).resolve().parents[1]
CATEGORY = "Memzoi"


def palette_commands() -> list[dict]:
    """(id, title) of every COMMANDS entry in src/logic/commands.ts, in order."""
    src = (EXT / "src/logic/commands.ts").read_text(encoding="utf-8")
    table = src[src.index("export const COMMANDS") :]
    table = table[: table.index("];")]
    out = []
    for m in re.finditer(r"id: '([\w.]+)',\s*title: '([^']+)'", table):
        out.append({"command": m.group(1), "title": m.group(2), "category": CATEGORY})
    return out


def configuration() -> dict:
    """contributes.configuration: client settings plus one entry per server setting (Settings' fields)."""
    codes = sorted(CODES)
    fields = [f.name for f in dataclasses.fields(Settings)]
    defaults = Settings()
    props: dict[str, dict] = {
        "memzoi.server.path": {
            "type": "string",
            "default": "",
            "scope": "machine-overridable",
            "markdownDescription": "Path of the `memzoi-lsp` program (absolute, `~/…`, or relative to the first workspace folder; `${workspaceFolder}` is expanded), overriding the server bundled in the extension. Empty: use `memzoi.server.pythonPath`, else the bundled server (run by `memzoi.interpreter`), else `memzoi-lsp` on `PATH`.",
        },
        "memzoi.server.pythonPath": {
            "type": "string",
            "default": "",
            "scope": "machine-overridable",
            "markdownDescription": "A Python interpreter in which `memzoi-lsp` is installed; the server is started as `python -m memzoi_lsp`. Used when `memzoi.server.path` is empty.",
        },
        "memzoi.server.args": {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "scope": "machine-overridable",
            "description": "Extra command-line arguments for the language server.",
        },
        "memzoi.interpreter": {
            "type": "string",
            "default": "",
            "scope": "machine-overridable",
            "description": "Python 3.11 or newer that runs the language server bundled in the extension. Empty: the interpreter selected in the Python extension, else python3 on PATH. memzoi.server.path and memzoi.server.pythonPath take precedence over the bundled server.",
        },
        "memzoi.materializationGlobs": {
            "type": "array",
            "items": {"type": "string"},
            "default": ["**/*candidate*.json", "**/*.plan.json", "**/*.decision.json"],
            "scope": "window",
            "markdownDescription": "Glob patterns (matched against absolute paths, so start them with `**/`) of the materialization candidate, plan and decision JSON files the server should analyse. They live outside `.memzoi/`.",
        },
        "memzoi.confirmWrites": {
            "type": "boolean",
            "default": True,
            "scope": "window",
            "markdownDescription": "Review before writing: Apply, Supersede, Tombstone, Re-attest, Materialize and resident Approve, from a code action, lens, the Memory Inbox or the palette, first show the diff of every file the change writes, then ask Apply or Cancel naming the target; Reject, Route to local memory and Undo ask for confirmation. Off: they write at once (a *Review* still shows the diff).",
        },
        "memzoi.trace.server": {
            "type": "string",
            "enum": ["off", "messages", "verbose"],
            "default": "off",
            "scope": "window",
            "description": "Traces the communication between VS Code and the Memzoi language server in the Memzoi output (set the output's log level to Trace).",
        },
    }
    described = {
        "severity": {
            "type": "object",
            "default": {},
            "scope": "resource",
            "propertyNames": {"enum": codes},
            "additionalProperties": {"type": "string", "enum": ["error", "warning", "information", "hint"]},
            "markdownDescription": "Per-code severity overrides, e.g. `{\"duplicate_content\": \"information\"}`. The codes Memzoi refuses a file for ("
            + ", ".join(f"`{c}`" for c in sorted(UNSUPPRESSIBLE))
            + ") cannot be downgraded.",
        },
        "disabled": {
            "type": "array",
            "items": {"type": "string", "enum": codes},
            "uniqueItems": True,
            "default": [],
            "scope": "resource",
            "markdownDescription": "Diagnostic codes never shown. A code Memzoi refuses a file for cannot be disabled.",
        },
        "debounce_ms": {
            "type": "integer",
            "minimum": 0,
            "maximum": 10000,
            "default": defaults.debounce_ms,
            "scope": "window",
            "description": "Delay in milliseconds after the last keystroke before an open document is re-analysed.",
        },
        "log_level": {
            "type": "string",
            "enum": ["debug", "info", "warning", "error"],
            "default": defaults.log_level,
            "scope": "window",
            "description": "The least severe server log record sent to the Memzoi output.",
        },
        "log_to_client": {
            "type": "boolean",
            "default": defaults.log_to_client,
            "scope": "window",
            "description": "Send the server's log records to the editor as window/logMessage (the Memzoi output); its standard error gets only warnings and errors.",
        },
        "show_document_timeout_ms": {
            "type": "integer",
            "minimum": 1,
            "maximum": 600000,
            "default": defaults.show_document_timeout_ms,
            "scope": "window",
            "description": "How long a lifecycle command waits for the editor to open the file it created, in milliseconds; the change is on disk either way.",
        },
    }
    for name in fields:
        if name not in described:
            raise SystemExit(f"server setting {name!r} has no VS Code description in {__file__}; add one")
        props[f"memzoi.{wire_name(name)}"] = described[name]
    return {"title": "Memzoi", "properties": props}


def contributes() -> dict:
    """The full contributes block."""
    cmds = palette_commands()
    client_cmds = [
        {"command": "memzoi.restart", "title": "Restart Language Server", "category": CATEGORY},
        {"command": "memzoi.showOutput", "title": "Show Output", "category": CATEGORY},
        {"command": "memzoi.runServerCommand", "title": "Run Server Command…", "category": CATEGORY},
        {"command": "memzoi.inbox.refresh", "title": "Refresh Memory Inbox", "category": CATEGORY, "icon": "$(refresh)"},
        {"command": "memzoi.inbox.open", "title": "Open", "category": CATEGORY, "icon": "$(go-to-file)"},
        {"command": "memzoi.inbox.apply", "title": "Apply", "category": CATEGORY, "icon": "$(check)"},
        {"command": "memzoi.inbox.reject", "title": "Reject…", "category": CATEGORY, "icon": "$(close)"},
        {"command": "memzoi.inbox.routeLocal", "title": "Route to Local Memory", "category": CATEGORY, "icon": "$(lock)"},
        {"command": "memzoi.inbox.recover", "title": "Recover…", "category": CATEGORY, "icon": "$(debug-restart)"},
        {"command": "memzoi.inbox.approveResident", "title": "Approve", "category": CATEGORY, "icon": "$(check)"},
        {"command": "memzoi.inbox.rejectResident", "title": "Reject…", "category": CATEGORY, "icon": "$(close)"},
        {"command": "memzoi.inbox.undoResident", "title": "Undo", "category": CATEGORY, "icon": "$(discard)"},
        {"command": "memzoi.inbox.recoverResident", "title": "Recover…", "category": CATEGORY, "icon": "$(debug-restart)"},
        {"command": "memzoi.inbox.approveLocal", "title": "Approve", "category": CATEGORY, "icon": "$(check)"},
        {"command": "memzoi.inbox.rejectLocal", "title": "Reject…", "category": CATEGORY, "icon": "$(close)"},
        {"command": "memzoi.inbox.showLocal", "title": "Show", "category": CATEGORY, "icon": "$(eye)"},
        {"command": "memzoi.inbox.continueCheckpoint", "title": "Continue Checkpoint", "category": CATEGORY,
         "icon": "$(debug-continue)"},
        {"command": "memzoi.inbox.closeCheckpoint", "title": "Close Checkpoint", "category": CATEGORY, "icon": "$(close)"},
        {"command": "memzoi.health.refresh", "title": "Refresh Memory Health", "category": CATEGORY, "icon": "$(refresh)"},
        {"command": "memzoi.inbox.openJob", "title": "Open Reflection Job", "category": CATEGORY, "icon": "$(sparkle)"},
        # Resident edit-and-approve on a decidable candidate's row, and one-step removal of an entry (issue 34).
        {"command": "memzoi.inbox.editResident", "title": "Edit and Approve…", "category": CATEGORY, "icon": "$(edit)"},
        {"command": "memzoi.removeResidentEntry", "title": "Remove Resident Memory Entry…", "category": CATEGORY},
    ]
    row_only = ["memzoi.inbox.open", "memzoi.inbox.apply", "memzoi.inbox.reject", "memzoi.inbox.routeLocal",
                "memzoi.inbox.recover", "memzoi.inbox.approveResident", "memzoi.inbox.rejectResident",
                "memzoi.inbox.undoResident", "memzoi.inbox.recoverResident", "memzoi.inbox.approveLocal", "memzoi.inbox.rejectLocal",
                "memzoi.inbox.showLocal", "memzoi.inbox.continueCheckpoint", "memzoi.inbox.closeCheckpoint",
                "memzoi.inbox.openJob", "memzoi.inbox.editResident"]
    # Rows carry context values by what the server says applies (src/logic/inboxView.ts, contextValue): Apply only
    # on a packet the core lets through, Approve/Reject only on a decidable resident candidate.
    view = "view == memzoi.inbox && "
    ready = view + "viewItem == memzoi.proposal.ready"
    proposal = view + r"viewItem =~ /^memzoi\.proposal\./"
    routable = view + "viewItem == memzoi.proposal.blocked.routable"
    resident = view + r"viewItem =~ /^memzoi\.resident\./"
    decidable = view + r"viewItem =~ /^memzoi\.resident\.\w+\.decidable$/"
    resident_undoable = view + r"viewItem =~ /^memzoi\.resident\.applied.*\.undoable$/"
    resident_uncertain = view + "viewItem == memzoi.resident.uncertain"
    local = view + "viewItem == memzoi.local"
    uncertain = view + "viewItem == memzoi.uncertain"
    # Session checkpoints: Continue only where the server says it applies now (open and current), Close on every
    # open one (src/logic/inboxView.ts: memzoi.checkpoint[.continuable]).
    continuable = view + "viewItem == memzoi.checkpoint.continuable"
    checkpoint = view + r"viewItem =~ /^memzoi\.checkpoint/"
    return {
        "commands": cmds + client_cmds,
        "configuration": configuration(),
        # Its own activity-bar container: resident rows stay visible without collapsing the file tree (issue 28).
        "viewsContainers": {"activitybar": [{"id": "memzoi", "title": "Memzoi", "icon": "media/inbox.svg"}]},
        "views": {"memzoi": [
            {"id": "memzoi.inbox", "name": "Memory Inbox", "icon": "media/inbox.svg", "contextualTitle": "Memzoi"},
            # The repository maintenance plan (memzoi.memoryHealth): duplicates, contradictions, expiring records.
            {"id": "memzoi.health", "name": "Memory Health", "icon": "media/inbox.svg", "contextualTitle": "Memzoi"},
        ]},
        "viewsWelcome": [
            {
                "view": "memzoi.inbox",
                "contents": "No pending proposals, resident-memory or local-memory candidates, or uncertain changes.\n[Refresh](command:memzoi.inbox.refresh)\n[Show Output](command:memzoi.showOutput)",
            },
            {
                "view": "memzoi.health",
                "contents": "No duplicate, contradicting, stale or expiring repository records.\n[Refresh](command:memzoi.health.refresh)",
            },
        ],
        "menus": {
            "commandPalette": [{"command": c, "when": "false"} for c in row_only],
            "view/title": [{"command": "memzoi.inbox.refresh", "when": "view == memzoi.inbox", "group": "navigation"},
                           {"command": "memzoi.health.refresh", "when": "view == memzoi.health", "group": "navigation"}],
            "view/item/context": [
                {"command": "memzoi.inbox.apply", "when": ready, "group": "inline@1"},
                {"command": "memzoi.inbox.routeLocal", "when": routable, "group": "inline@1"},
                {"command": "memzoi.inbox.reject", "when": proposal, "group": "inline@2"},
                {"command": "memzoi.inbox.open", "when": proposal, "group": "inline@3"},
                {"command": "memzoi.inbox.recover", "when": uncertain, "group": "inline@1"},
                {"command": "memzoi.inbox.open", "when": uncertain, "group": "inline@2"},
                {"command": "memzoi.inbox.approveResident", "when": decidable, "group": "inline@1"},
                {"command": "memzoi.inbox.rejectResident", "when": decidable, "group": "inline@2"},
                {"command": "memzoi.inbox.undoResident", "when": resident_undoable, "group": "inline@1"},
                {"command": "memzoi.inbox.recoverResident", "when": resident_uncertain, "group": "inline@1"},
                {"command": "memzoi.inbox.open", "when": resident, "group": "inline@3"},
                {"command": "memzoi.inbox.approveLocal", "when": local, "group": "inline@1"},
                {"command": "memzoi.inbox.rejectLocal", "when": local, "group": "inline@2"},
                {"command": "memzoi.inbox.showLocal", "when": local, "group": "inline@3"},
                {"command": "memzoi.inbox.continueCheckpoint", "when": continuable, "group": "inline@1"},
                {"command": "memzoi.inbox.closeCheckpoint", "when": checkpoint, "group": "inline@2"},
                # a reflection job's row opens its request and outcome; a candidate row links to its job (issue 34)
                {"command": "memzoi.inbox.openJob", "when": view + r"viewItem =~ /^memzoi\.reflection\./",
                 "group": "inline@1"},
                {"command": "memzoi.inbox.openJob", "when": resident, "group": "reflection@1"},
                {"command": "memzoi.inbox.editResident", "when": decidable, "group": "inline@4"},
            ],
        },
    }


def main(argv: list[str]) -> int:
    pkg_path = EXT / "package.json"
    pkg = json.loads(pkg_path.read_text(encoding="utf-8"))
    want = contributes()
    if "--check" in argv:
        if pkg.get("contributes") != want:
            print("vscode-extension/package.json `contributes` is out of date; run vscode-extension/scripts/contributes.py")
            return 1
        return 0
    pkg["contributes"] = want
    pkg_path.write_text(json.dumps(pkg, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
