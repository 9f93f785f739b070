"""No committed file name drives the reviewer's terminal, and every printed path names a real file: names holding
an OSC title sequence, a clear-screen sequence, a newline, a right-to-left override (Trojan Source) or a byte that is
not UTF-8 are printed escaped (:mod:`memzoi.base.printable`) by every command that shows them, with the exit codes
they had before; JSON gives the undecodable byte as ``\\xHH`` and SARIF percent-encodes the raw bytes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from memzoi.cli.main import main

from . import builders
from .conftest import ROOT
from .test_framing_yaml import VALID

#: An exported record of the shipped examples (the defect report copied it under the hostile name).
EXAMPLE = (ROOT / "examples" / ".memzoi" / "records" / "use-pnpm-for-installs.md").read_text(encoding="utf-8")

HOSTILE = "odd \x1b]0;PWNED\x07\x1b[2J name\nx\u202e"  # OSC title, clear screen, newline, RLO
HOSTILE_SHOWN = "odd \\x1b]0;PWNED\\x07\\x1b[2J name\\x0ax\\u202e"
PACKET = "odd \x1b]0;PWNED\x07\x1b[2J name\nx"
PACKET_SHOWN = "odd \\x1b]0;PWNED\\x07\\x1b[2J name\\x0ax"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def raw_controls(text: str) -> list[str]:
    """The characters of ``text`` a terminal would act on or hide: anything not printable but a line break."""
    return sorted({c for c in text if c != "\n" and not c.isprintable()})


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    records = root / ".memzoi" / "records"
    pending = root / ".memzoi" / "proposals" / "pending"
    records.mkdir(parents=True)
    pending.mkdir(parents=True)
    (records / "rec-x.md").write_text(VALID, encoding="utf-8")
    (records / "use-pnpm-for-installs.md").write_text(EXAMPLE, encoding="utf-8")
    (records / f"{HOSTILE}.md").write_text(EXAMPLE, encoding="utf-8")
    with open(os.path.join(os.fsencode(records), b"caf\xe9.md"), "wb") as fh:
        fh.write(VALID.encode())
    (pending / f"{PACKET}.md").write_text(builders.packet("prop-a", title="Prefer server sessions"), encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    monkeypatch.chdir(root)
    return root


@pytest.mark.parametrize(
    "argv, code, shown",
    [
        (["check"], 1, [f".memzoi/records/{HOSTILE_SHOWN}.md:1:1:", ".memzoi/records/caf\\xe9.md:1:1: canonical_path"]),
        (["check", "--format", "github"], 1, [f"file=.memzoi/records/{HOSTILE_SHOWN}.md", "caf\\xe9.md"]),
        (["proposals", "list"], 0, [f"{PACKET_SHOWN}  create  Prefer server sessions"]),
        (["rebuild"], 0, [f"  refused .memzoi/records/{HOSTILE_SHOWN}.md: "]),
        (["export"], 0, [f"  withheld {HOSTILE_SHOWN}: invalid_identifier"]),
        (
            ["search", "pnpm"],
            0,
            [
                f".memzoi/records/{HOSTILE_SHOWN}.md: [record, active, not usable memory: typed-record] {HOSTILE_SHOWN}: Use pnpm"
            ],
        ),
        (["doctor"], 1, [f"refused admission (.memzoi/records/{HOSTILE_SHOWN}.md)"]),
        (["proposals", "show", f"{PACKET}.md"], 1, [f"{PACKET_SHOWN}.md: "]),
    ],
)
def test_human_output_escapes_hostile_names(capsys, project, argv, code, shown):
    if argv[0] in ("export", "doctor"):  # they read the index
        assert run(capsys, "rebuild")[0] == 0
    got, out, err = run(capsys, *argv)
    assert got == code
    assert raw_controls(out) == [] and raw_controls(err) == []
    assert "\ufffd" not in out + err  # an undecodable byte is spelled, never replaced
    for text in shown:
        assert text in out + err


def test_check_json_and_sarif_name_the_real_file(capsys, project):
    code, out, _ = run(capsys, "check", "--format", "json")
    assert code == 1
    paths = {f["path"].rsplit("/", 1)[-1] for f in json.loads(out)["findings"]}
    assert "caf\\xe9.md" in paths  # lossless spelling of byte 0xe9 (docs/cli.md), not U+FFFD
    assert f"{HOSTILE}.md" in paths  # JSON escapes controls its own way; the consumer sees the code points
    code, out, _ = run(capsys, "check", "--format", "sarif")
    uris = {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for r in json.loads(out)["runs"][0]["results"]
        for loc in r["locations"]
    }
    assert code == 1 and ".memzoi/records/caf%E9.md" in uris  # the raw byte, percent-encoded


def test_check_from_the_verdict_cache_spells_names_the_same(capsys, project):
    first = run(capsys, "check", ".")
    again = run(capsys, "check", ".")
    assert first == again and "./.memzoi/records/caf\\xe9.md:1:1:" in first[1]


def test_lsp_uris_percent_encode_the_raw_bytes():
    from memzoi_lsp.documents import path_to_uri, uri_to_path

    path = os.fsdecode(b"/repo/.memzoi/records/caf\xe9.md")
    uri = path_to_uri(path)  # pygls alone raises on the undecodable byte
    assert uri == "file:///repo/.memzoi/records/caf%E9.md"
    assert uri_to_path(uri) == Path(path)  # the real file's name, not one with U+FFFD
    assert uri_to_path("file:///repo/caf%C3%A9.md") == Path("/repo/café.md")


def test_a_packet_body_is_shown_with_its_lines_and_no_raw_control(capsys, project):
    body = "First line\x1b[2J.\n\tindented \u202eevil"
    builders.write(project, builders.packet_path("prop-b"), builders.packet("prop-b", body=body))
    code, out, err = run(capsys, "proposals", "show", "prop-b")
    assert raw_controls(out.replace("\t", "")) == [] and raw_controls(err) == []
    assert "First line\\x1b[2J.\n\tindented \\u202eevil" in out  # lines and tabs kept
    assert code == 0
