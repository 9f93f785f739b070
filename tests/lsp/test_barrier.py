"""The server's per-file exception barrier: with a fault injected into the analysis of files named ``boom*``
(a ``sitecustomize`` module in the server process), the background scan, the index and the file watcher go on
with the other files, and the faulty file shows an ``internal_error`` diagnostic instead of looking clean."""

from __future__ import annotations

import os
from pathlib import Path

from ..builders import edit
from .conftest import record_text
from .test_transport import Server

SECRET = "sk-live-" + "Q7h2Kx9Lm4Pz8Rv1Tn6Wb3Yc5Ud0Fe"

FAULT = """
import pathlib
import memzoi.judge.analysis as analysis

_real = analysis.analyze_text


def _faulty(text, path=None, **kw):
    if path is not None and pathlib.Path(path).name.startswith("boom"):
        raise KeyError(text)  # quotes the file: must never reach stdout, a diagnostic or the log
    return _real(text, path, **kw)


analysis.analyze_text = _faulty
"""


def _codes_of(server: Server, *names: str) -> dict[str, set[str]]:
    """The codes of the first non-empty diagnostics published for each file of ``names`` (in any order)."""
    seen: dict[str, set[str]] = {}
    while len(seen) < len(names):
        msg = server.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["diagnostics"]
                and m["params"]["uri"].rsplit("/", 1)[1] in names
            )
        )
        seen.setdefault(msg["params"]["uri"].rsplit("/", 1)[1], {d["code"] for d in msg["params"]["diagnostics"]})
    return seen


def test_scan_index_and_watcher_go_on_past_a_failing_file(tmp_path: Path):
    root = tmp_path / "ws"
    records = root / ".memzoi" / "records"
    records.mkdir(parents=True)
    (records / "a.md").write_text(record_text("a"), encoding="utf-8")
    (records / "boom.md").write_text(record_text("boom") + f"\ntoken {SECRET}\n", encoding="utf-8")
    (records / "c.md").write_text(edit(record_text("c"), "lane: semantic", "lane: nope"), encoding="utf-8")
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(FAULT, encoding="utf-8")
    path = os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    s = Server(root, tmp_path / "home", env={"PYTHONPATH": path})
    try:
        # the scan: the faulty file says so, and the files after it are still diagnosed
        found = _codes_of(s, "boom.md", "c.md")
        assert found["boom.md"] == {"internal_error"} and "invalid_value" in found["c.md"]
        # the index: rebuilt in the server with every file, the faulty one refused
        reply = s.request(
            {
                "jsonrpc": "2.0",
                "id": 20,
                "method": "workspace/executeCommand",
                "params": {"command": "memzoi.rebuild", "arguments": [{}]},
            }
        )
        result = reply["result"]
        assert result["files"] == 3 and result["records"] == 3, result
        refused = {r["path"]: r["refusals"] for r in result["refused"]}
        assert refused[".memzoi/records/boom.md"] == ["typed-record"] and ".memzoi/records/a.md" not in refused
        # the watcher: new files on disk, one of them faulty
        (records / "boom-2.md").write_text(record_text("boom-2"), encoding="utf-8")
        (records / "d.md").write_text(edit(record_text("d"), "lane: semantic", "lane: nope"), encoding="utf-8")
        found = _codes_of(s, "boom-2.md", "d.md")
        assert found["boom-2.md"] == {"internal_error"} and "invalid_value" in found["d.md"]
        assert "result" in s.request(
            {"jsonrpc": "2.0", "id": 21, "method": "workspace/symbol", "params": {"query": "pnpm"}}
        )
        assert s.close() == 0
    finally:
        s.proc.kill()
    assert SECRET.encode() not in s.stderr
