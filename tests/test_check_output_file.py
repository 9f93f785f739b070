"""`memzoi check --output-file` never writes its report over memory: not under `.memzoi` (records, packets and
settings are written only by ledgered changes) nor `.zuno` (resident memory). Trial 2: `--output-file
.memzoi/records/<record>.md` replaced the record with the JSON report, outside the ledger, with no way back."""

from __future__ import annotations

import pytest

from memzoi.cli.main import main

from . import builders


@pytest.mark.parametrize("target", [".memzoi/records/r.md", ".memzoi/report.json", ".zuno/RULES.md"])
def test_the_report_never_replaces_memory(capsys, tmp_path, monkeypatch, target):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    builders.write(tmp_path, builders.record_path("r"), builders.record("r"))
    dest = tmp_path / target
    dest.parent.mkdir(parents=True, exist_ok=True)
    if not dest.exists():
        dest.write_text("kept\n", encoding="utf-8")
    before = dest.read_bytes()
    code = main(["check", "--format", "json", "--output-file", target])
    _, err = capsys.readouterr()
    assert code == 2 and "--output-file" in err and "never goes under .memzoi or .zuno" in err
    assert dest.read_bytes() == before


def test_a_report_file_elsewhere_is_written(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    builders.write(tmp_path, builders.record_path("r"), builders.record("r"))
    assert main(["check", "--format", "json", "--output-file", "report.json"]) == 0
    assert (tmp_path / "report.json").read_text(encoding="utf-8").startswith("{")
