"""The language server over files with YAML escapes in every field (issue 30): the scan publishes an
``invalid_encoding`` diagnostic for every file whose value decodes to a lone surrogate, the other files' findings
are still published, and an open document (whose text may itself hold a lone surrogate, sent by a client as a JSON
escape) gets its diagnostics."""

from __future__ import annotations

import random
from pathlib import Path

from .. import builders, escapes
from .conftest import git_init
from .test_stdio import frame
from .test_transport import Server


def _escaped_workspace(root: Path) -> dict[str, bool]:
    """Every field of every kind of file holding an escaped value (a lone surrogate and random other escapes);
    returns file name → whether the value decodes to a lone surrogate."""
    rng = random.Random(30)
    escapes.workspace(root)
    names = {}
    for kind in escapes.KINDS:
        for i, field in enumerate(escapes.fields_of(kind)):
            pieces = [(3, 0)] + [(rng.randrange(5), rng.randrange(1000)) for _ in range(rng.randint(0, 4))]
            rel, text = escapes.escaped_file(kind, field, pieces, rid=f"{kind}-{i}")
            builders.write(root, rel, text)
            names[Path(rel).name] = escapes.decoded_surrogate(pieces)
    return names


def test_the_scan_publishes_every_escaped_file_and_the_others(tmp_path: Path):
    root = tmp_path / "ws"
    names = _escaped_workspace(root)
    git_init(root)
    wanted = {n for n, bad in names.items() if bad} | {f"{escapes.SENTINEL[0]}.md"}
    s = Server(root, tmp_path / "home")
    try:
        seen: dict[str, set[str]] = {}
        while not wanted <= set(seen):
            msg = s.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["diagnostics"])
            name = msg["params"]["uri"].rsplit("/", 1)[1]
            seen[name] = {d["code"] for d in msg["params"]["diagnostics"]}
        assert escapes.SENTINEL[1] in seen[f"{escapes.SENTINEL[0]}.md"]
        assert all("invalid_encoding" in seen[n] for n in wanted - {f"{escapes.SENTINEL[0]}.md"})
        assert not any("internal_error" in codes for codes in seen.values())
        # an open document whose text holds a raw lone surrogate (a client's JSON escape) in a value and the body
        text = builders.record("opened", title="\ud800 raw", body="Body \udfff raw.")
        uri = (root / builders.record_path("opened")).as_uri()
        s.send(
            frame(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/didOpen",
                    "params": {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}},
                }
            )
        )
        msg = s.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == uri
                and m["params"]["diagnostics"]
            )
        )
        opened = {d["code"] for d in msg["params"]["diagnostics"]}
        assert "invalid_encoding" in opened and "internal_error" not in opened
        # requests on an escaped document (a surrogate in its title and its `supersedes`) are answered
        rel, text = escapes.escaped_file("record", ("supersedes",), [(3, 0), (0, 1)], rid="asked")
        text = text.replace('title: "Record asked"', 'title: "\\uDC00 asked"')
        uri = (root / rel).as_uri()
        s.send(
            frame(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/didOpen",
                    "params": {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}},
                }
            )
        )
        line = text[: text.index("supersedes:")].count("\n")
        doc = {"textDocument": {"uri": uri}}
        at = {**doc, "position": {"line": line, "character": 14}}
        whole = {"start": {"line": 0, "character": 0}, "end": {"line": line + 1, "character": 0}}
        for i, (method, params) in enumerate(
            [
                ("textDocument/hover", at),
                ("textDocument/completion", at),
                ("textDocument/documentSymbol", doc),
                ("textDocument/codeLens", doc),
                ("textDocument/definition", at),
                ("textDocument/diagnostic", doc),
                ("textDocument/codeAction", {**doc, "range": whole, "context": {"diagnostics": []}}),
            ],
            100,
        ):
            reply = s.request({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
            assert "result" in reply or reply["error"]["code"] != -32603, (method, reply)
    finally:
        assert s.close() == 0
