"""``memzoi check`` and ``memzoi upgrade`` as SPEC §8 describes them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from memzoi.cli.main import main
from memzoi.judge.analysis import analyze_path
from memzoi.models.schemas import generate
from memzoi.runs.check import check_paths

from .conftest import ROOT
from .test_framing_yaml import VALID


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def workspace(tmp_path):
    records = tmp_path / ".memzoi" / "records"
    records.mkdir(parents=True)
    (records / "rec-x.md").write_text(VALID, encoding="utf-8")
    return tmp_path


def test_clean_workspace_exits_zero(capsys, workspace):
    code, out, err = run(capsys, "check", str(workspace))
    assert code == 0 and out == ""
    assert "1 file(s) checked" in err


def test_json_shape_matches_spec(capsys, workspace):
    bad = VALID.replace("lane: semantic", "lane: weekly")
    (workspace / ".memzoi/records/rec-x.md").write_text("😀\n" * 0 + bad, encoding="utf-8")
    code, out, _ = run(capsys, "check", str(workspace), "--format", "json")
    assert code == 1
    doc = json.loads(out)
    assert set(doc) == {"findings", "files_checked"} and doc["files_checked"] == 1
    [f] = doc["findings"]
    assert set(f) == {"path", "code", "severity", "message", "range"}
    assert f["path"] == str(workspace / ".memzoi" / "records" / "rec-x.md")
    assert f["code"] == "invalid_value" and f["severity"] == "error"
    assert f["range"] == {"start": {"line": 5, "character": 6}, "end": {"line": 5, "character": 12}}


def test_json_character_positions_are_code_points(capsys, workspace):
    text = VALID.replace("title: Use pnpm", 'title: "😀 中文 x"\nbogus: 1').replace("# Use pnpm", "# 😀 中文 x")
    path = workspace / ".memzoi/records/rec-x.md"
    path.write_text(text, encoding="utf-8")
    _, out, _ = run(capsys, "check", str(path), "--format", "json")
    [f] = json.loads(out)["findings"]
    assert f["code"] == "unknown_key" and f["range"]["start"] == {"line": 7, "character": 0}
    path.write_text(
        VALID.replace("Use pnpm for installs.", "x 😀 y").replace("# Use pnpm", "# 😀 wrong"), encoding="utf-8"
    )
    _, out, _ = run(capsys, "check", str(path), "--format", "json")
    [f] = json.loads(out)["findings"]
    assert f["code"] == "title_h1_mismatch"
    assert f["range"]["start"]["character"] == 2 and f["range"]["end"]["character"] == 9


def test_path_display_joins_argument(capsys, workspace, monkeypatch):
    monkeypatch.chdir(workspace)
    (workspace / ".memzoi/records/rec-x.md").write_text(VALID.replace("kind: memory", "kind: mem"), encoding="utf-8")
    code, out, _ = run(capsys, "check", ".")
    assert code == 1
    assert out.startswith("./.memzoi/records/rec-x.md:3:7: invalid_value ")


def test_text_sarif_github_formats(capsys, workspace):
    (workspace / ".memzoi/records/rec-x.md").write_text(
        VALID.replace("status: active", "status: done"), encoding="utf-8"
    )
    _, out, _ = run(capsys, "check", str(workspace), "--format", "sarif")
    sarif = json.loads(out)
    assert sarif["version"] == "2.1.0"
    [result] = sarif["runs"][0]["results"]
    assert result["ruleId"] == "invalid_value" and result["level"] == "error"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 11
    _, out, _ = run(capsys, "check", str(workspace), "--format", "github")
    assert out.startswith("::error file=") and "line=11,col=9" in out and "title=memzoi invalid_value::" in out


def test_usage_errors_exit_two(capsys, tmp_path):
    code, _, err = run(capsys, "check", str(tmp_path / "missing"))
    assert code == 2 and "no such file" in err
    with pytest.raises(SystemExit) as exc:
        main(["check", "--format", "xml"])
    assert exc.value.code == 2


def test_warnings_only_exit_zero(capsys, corpus):
    code, out, _ = run(capsys, "check", str(corpus / "legacy"))
    assert code == 0
    assert out.count("legacy_profile") == 20


def test_one_bad_file_does_not_block_the_others(tmp_path):
    """B17: 50 valid records and one malformed one: exactly one file has findings."""
    records = tmp_path / ".memzoi" / "records"
    records.mkdir(parents=True)
    for i in range(50):
        rid = f"rec-{i}"
        # distinct bodies: identical active records would rightly be reported as duplicate_content
        (records / f"{rid}.md").write_text(
            VALID.replace("rec-x", rid).replace("for installs.", f"for installs ({i})."), encoding="utf-8"
        )
    (records / "rec-bad.md").write_text(
        VALID.replace("rec-x", "rec-bad").replace("title: Use pnpm", "title: [[link]]tail"), encoding="utf-8"
    )
    report = check_paths([str(tmp_path)])
    assert report.files_checked == 51
    assert {l.path.rsplit("/", 1)[-1] for l in report.findings} == {"rec-bad.md"}
    assert [l.finding.code for l in report.findings] == ["yaml_syntax"]
    assert sum(1 for p in records.glob("*.md") if analyze_path(p).model is not None) == 50


def test_hidden_and_symlinks_skipped(tmp_path):
    records = tmp_path / ".memzoi" / "records"
    records.mkdir(parents=True)
    (records / "rec-x.md").write_text(VALID, encoding="utf-8")
    (records / ".rec-x.md.swp").write_text("junk")
    (records / "link.md").symlink_to(records / "rec-x.md")
    (records / "index.md").write_text("# notes\n")
    (tmp_path / ".notes").mkdir()  # hidden outside .memzoi: skipped (below .memzoi a hidden file is scanned)
    (tmp_path / ".notes" / "a.md").write_text(VALID.replace("status: active", "status: done"), encoding="utf-8")
    report = check_paths([str(tmp_path)])
    assert [(l.path.rsplit("/", 1)[-1], l.finding.code) for l in report.findings] == [
        ("link.md", "canonical_path"),
        ("link.md", "unsafe_output_path"),
    ]  # ours and Memzoi's code for it
    reasons = {(display.rsplit("/", 1)[-1], reason) for display, reason in report.skipped}
    assert (".notes", "hidden") in reasons and (".rec-x.md.swp", "editor swap, backup or lock file") in reasons


def test_a_symlink_loop_is_canonical_path_and_the_walk_goes_on(tmp_path):
    # os.DirEntry.is_dir() raises ELOOP on a link to itself: that one entry must not end the whole check
    records = tmp_path / ".memzoi" / "records"
    records.mkdir(parents=True)
    (records / "rec-x.md").write_text(VALID, encoding="utf-8")
    (records / "loop.md").symlink_to("loop.md")
    (records / "loop-dir").symlink_to("loop-dir")
    report = check_paths([str(tmp_path)])
    assert sorted((l.path.rsplit("/", 1)[-1], l.finding.code) for l in report.findings) == [
        ("loop.md", "canonical_path"),
        ("loop.md", "unsafe_output_path"),
    ]
    assert report.files_checked == 1


def test_reserved_file_with_frontmatter(tmp_path):
    records = tmp_path / ".memzoi" / "records"
    records.mkdir(parents=True)
    (records / "index.md").write_text(VALID, encoding="utf-8")
    report = check_paths([str(tmp_path)])
    assert [l.finding.code for l in report.findings] == ["reserved_file"]


def test_upgrade_diff_then_write(capsys, tmp_path, corpus):
    records = tmp_path / ".memzoi" / "records"
    records.mkdir(parents=True)
    src = next(corpus.glob("legacy/07c771ea/.memzoi/records/*.md"))
    dst = records / src.name
    shutil.copyfile(src, dst)  # the shared corpus is read-only; a working copy is not
    before = dst.read_bytes()
    code, out, _ = run(capsys, "upgrade", str(dst))
    assert code == 0 and out.startswith("--- a/") and "+profile: memzoi" in out
    assert dst.read_bytes() == before
    code, _, err = run(capsys, "upgrade", str(records), "--write")
    assert code == 0 and "upgraded" in err
    assert run(capsys, "check", str(dst))[0] == 0
    assert dst.read_bytes() == (corpus / "memzoi-repo/.memzoi/records" / src.name).read_bytes()


def test_committed_schemas_match_models():
    for name, text in generate().items():
        committed = ROOT / "schemas" / name
        assert committed.exists(), f"schemas/{name} missing: run python -m memzoi.models.schemas schemas"
        assert committed.read_text(encoding="utf-8") == text, (
            f"schemas/{name} is stale: run python -m memzoi.models.schemas schemas"
        )


def test_console_script_runs_as_module(workspace):
    proc = subprocess.run(
        [sys.executable, "-m", "memzoi", "check", str(workspace), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["files_checked"] == 1


def test_examples_workspace(capsys):
    code, out, _ = run(capsys, "check", str(ROOT / "examples"))
    assert code == 1
    got = {line.split(": ", 1)[1].split(" ", 1)[0] for line in out.splitlines()}
    assert {"legacy_profile", "id_path_mismatch", "invalid_value", "unknown_key", "title_h1_mismatch"} <= got
    assert "use-pnpm-for-installs.md" not in out and "api-errors-use-problem-json.md" not in out


def test_upgrade_diff_masks_detected_secrets(capsys, tmp_path):
    token = "gh" + "p_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
    records = tmp_path / ".memzoi" / "records"
    records.mkdir(parents=True)
    legacy = (
        '---\ntype: decision\ntitle: "Keep it"\ntimestamp: "2026-07-05T11:31:45Z"\nstatus: active\n'
        f'scope: repo\nvisibility: repo\nconfidence: 1\nsource_ref: "https://x:{token}@github.com/a/b"\n---\n\n'
        f"# Keep it\n\nBody with {token}.\n"
    )
    (records / "keep-it.md").write_text(legacy, encoding="utf-8")
    code, out, _ = run(capsys, "upgrade", str(records / "keep-it.md"))
    assert code == 0 and "+profile: memzoi" in out
    assert token not in out and "[redacted]" in out


def test_non_utf8_file_name_and_symlinked_folder(capsys, tmp_path, monkeypatch):
    import os

    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    records = tmp_path / ".memzoi" / "records"
    records.mkdir(parents=True)
    (records / "rec-x.md").write_text(VALID, encoding="utf-8")
    bad = os.path.join(os.fsencode(records), b"caf\xe9.md")
    with open(bad, "wb") as fh:
        fh.write(VALID.encode())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / ".memzoi" / "proposals").symlink_to(elsewhere, target_is_directory=True)
    code, out, _ = run(capsys, "check", str(tmp_path), "--format", "json")
    doc = json.loads(out)  # valid JSON and UTF-8 although a name is not
    got = sorted((f["path"].rsplit("/", 1)[-1], f["code"]) for f in doc["findings"])
    assert got == [
        ("caf\\xe9.md", "canonical_path"),  # the undecodable byte spelled losslessly, never U+FFFD
        ("proposals", "canonical_path"),
        ("proposals", "unsafe_output_path"),
    ]  # a symlinked folder: Memzoi's code beside ours
    assert code == 1
    # rebuild refuses to read through the symlinked folder, as check reports it; without the link, the index and
    # the walk used by the language server skip the name instead of failing.
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["rebuild", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "canonical_path"
    (tmp_path / ".memzoi" / "proposals").unlink()
    assert main(["rebuild", "--json"]) == 0


def test_an_unparsable_config_is_an_error_at_its_position(capsys, workspace):
    (workspace / ".memzoi" / "config.toml").write_text('[project\nid = "x\n', encoding="utf-8")
    code, out, _ = run(capsys, "check", str(workspace))
    assert (
        code == 1
        and "config.toml:1:9: invalid_config Invalid configuration. Invalid TOML" in out
        and "uses its default" in out
    )


@pytest.mark.parametrize(
    "text, line",
    [
        ('[rules]\ndisabled = ["session_token",\n', 2),
        ('# settings\n[mcp]\nproposals_per_minute = 3\n[rules]\ndisabled = [\n  "session_token",\n', 5),
        ('[project]\nid = """demo\n\n', 2),
    ],
)
def test_a_value_never_closed_is_reported_where_it_starts(capsys, workspace, text, line):
    """tomllib names no line for a value that runs to the end ("at end of document"): the finding is placed on
    the line where that value starts, not at 1:1."""
    (workspace / ".memzoi" / "config.toml").write_text(text, encoding="utf-8")
    code, out, _ = run(capsys, "check", str(workspace / ".memzoi" / "config.toml"))
    assert code == 1 and f"config.toml:{line}:1: invalid_config Invalid configuration. Invalid TOML" in out, out
    assert "never closed" in out and "end of document" not in out


def test_a_config_file_given_by_name_is_checked_as_configuration(capsys, tmp_path):
    """`memzoi check .memzoi/config.toml` checks the settings (and scans the file for secrets: it is committed)
    instead of reporting missing frontmatter."""
    config = tmp_path / ".memzoi" / "config.toml"
    config.parent.mkdir()
    config.write_text('[project]\nid = "demo"\n', encoding="utf-8")
    code, out, err = run(capsys, "check", str(config), "--format", "json")
    assert code == 0 and json.loads(out) == {"findings": [], "files_checked": 1}
    assert "the settings are valid" in err and "frontmatter" not in err
    config.write_text("[project\n", encoding="utf-8")
    code, out, err = run(capsys, "check", str(config))
    assert (
        code == 1 and "invalid_config Invalid configuration. Invalid TOML" in out and "frontmatter_missing" not in out
    )


def test_text_output_keeps_one_finding_per_line_whatever_the_file_name(capsys, tmp_path):
    # A line break in a file name (or in a key a message quotes) split the text output, and a CI runner reads a
    # line starting with `::` as a workflow command
    records = tmp_path / ".memzoi" / "records"
    records.mkdir(parents=True)
    (records / "a\n::error file=x.py::pwned.md").write_text(VALID, encoding="utf-8")
    (records / "rec-x.md").write_text(
        VALID.replace("lane: semantic", 'lane: semantic\n"k\\n::warning::x": 1'), encoding="utf-8"
    )
    code, out, _ = run(capsys, "check", str(tmp_path))
    assert code == 1
    lines = out.splitlines()
    assert len(lines) >= 2 and all(line.startswith(str(records)) for line in lines), lines
    assert "a\\x0a::error" in out and "k\\x0a::warning" in out


def test_a_path_argument_too_long_or_bearing_a_secret_is_named_as_such(capsys, tmp_path):
    records = tmp_path / ".memzoi" / "records"
    records.mkdir(parents=True)
    code, _, err = run(capsys, "check", str(records / ("n" * 300 + ".md")))
    assert code == 2 and "longer than the file system allows" in err and "no such file" not in err
    token = "gh" + "p_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"  # assembled: no credential shape in the source
    code, _, err = run(capsys, "check", str(records / f"{token}.md"))
    assert code == 2 and "no such file" in err and token not in err and "<redacted-path:" in err


def test_a_credential_in_config_toml_is_worded_for_that_file(capsys, workspace):
    """config.toml has no body and is not a memory: a key in a comment is reported "in this file", and the
    value is never printed. The key is built at run time."""
    import random
    import string

    key = "AKIA" + "".join(random.Random(7).choice(string.ascii_uppercase + "234567") for _ in range(16))
    (workspace / ".memzoi" / "config.toml").write_text(f"# old deploy key {key}\n", encoding="utf-8")
    code, out, err = run(capsys, "check", str(workspace / ".memzoi" / "config.toml"), "--json")
    assert code == 1 and key not in out + err
    (f,) = [f for f in json.loads(out)["findings"] if f["code"] == "credential_token"]
    assert "in this file" in f["message"] and "body" not in f["message"] and "memory" not in f["message"], f
    # a record keeps the memory wording
    (workspace / ".memzoi" / "records" / "rec-x.md").write_text(VALID + f"\nOld key {key}\n", encoding="utf-8")
    code, out, err = run(capsys, "check", str(workspace / ".memzoi" / "records" / "rec-x.md"), "--json")
    assert key not in out + err
    messages = [f["message"] for f in json.loads(out)["findings"] if f["code"] == "credential_token"]
    assert messages and all("in the body" in m and "memory" in m for m in messages), messages
