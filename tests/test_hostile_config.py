"""A repository's ``.memzoi/config.toml`` that is a link to ``/dev/zero`` (git stores links, so a clone can carry
it), a FIFO, a folder or a 10 MB file: every command answers as for an invalid configuration, naming the file and
what to do; none reads without end, hangs or prints a traceback. ``memzoi check --format sarif`` never reads a
record linked to ``/dev/zero``. Each case runs in a bounded subprocess (:mod:`tests.bounded`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from . import builders
from .bounded import hostile, run

KINDS = {
    "zero": "is a symlink, which memzoi never follows here",
    "fifo": "is a FIFO (named pipe), not a regular file",
    "dir": "is a folder, not a regular file",
    "big": "is larger than 1048576 bytes",
}


def project(tmp_path: Path, kind: str) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "p"
    (root / ".memzoi" / "records").mkdir(parents=True)
    (root / ".memzoi" / "records" / "use-pnpm.md").write_text(builders.record("use-pnpm"), encoding="utf-8")
    hostile(root / ".memzoi" / "config.toml", kind)
    return root, {"MEMZOI_HOME": str(tmp_path / "home"), "HOME": str(tmp_path / "user")}


def clean(out: str) -> None:
    assert "Traceback" not in out and "internal_error" not in out and "MemoryError" not in out, out[-2000:]


@pytest.mark.parametrize("kind", list(KINDS))
def test_check_reports_an_unsafe_config_as_invalid_in_every_format(tmp_path: Path, kind: str):
    root, env = project(tmp_path, kind)
    done = run(["memzoi", "check", "--format", "json", "--no-cache"], root, env)
    clean(done.stdout + done.stderr)
    assert done.returncode == 1, done.stderr
    found = [f for f in json.loads(done.stdout)["findings"] if f["code"] == "invalid_config"]
    assert found and all(f["path"] == ".memzoi/config.toml" for f in found)
    assert any(KINDS[kind] in f["message"] and "replace it" in f["message"] or "shorten" in f["message"] for f in found)
    for fmt in ("text", "github", "sarif"):
        done = run(["memzoi", "check", "--format", fmt], root, env)
        clean(done.stdout + done.stderr)
        assert done.returncode == 1, (fmt, done.stderr)
        assert "invalid_config" in done.stdout, fmt


@pytest.mark.parametrize("kind", list(KINDS))
def test_search_rebuild_doctor_answer_as_for_an_invalid_config(tmp_path: Path, kind: str):
    bad_root, bad_env = project(tmp_path / "bad", "bad")
    root, env = project(tmp_path / "hostile", kind)
    for argv in (["memzoi", "rebuild"], ["memzoi", "search", "pnpm"], ["memzoi", "doctor"]):
        expected = run(argv, bad_root, bad_env)
        done = run(argv, root, env)
        clean(done.stdout + done.stderr)
        assert done.returncode == expected.returncode, (argv, done.stdout, done.stderr)


def test_init_never_reads_a_config_fifo(tmp_path: Path):
    root, env = project(tmp_path, "fifo")
    done = run(["memzoi", "init", "--project-id", "demo", str(root)], tmp_path, env)
    clean(done.stdout + done.stderr)
    assert done.returncode == 0, done.stderr
    assert "--project-id was not written" in done.stderr


def test_sarif_never_reads_a_record_linked_to_dev_zero(tmp_path: Path):
    root, env = project(tmp_path, "bad")
    (root / ".memzoi" / "config.toml").unlink()
    hostile(root / ".memzoi" / "records" / "zero.md", "zero")
    done = run(["memzoi", "check", "--format", "sarif"], root, env)
    clean(done.stdout + done.stderr)
    assert done.returncode == 1, done.stderr  # canonical_path: Memzoi refuses a link
    results = json.loads(done.stdout)["runs"][0]["results"]
    mine = [r for r in results if "zero.md" in r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]]
    assert mine and all(r["partialFingerprints"] for r in mine)


def test_the_users_own_config_linked_to_a_device_is_refused_not_read(tmp_path: Path):
    root, env = project(tmp_path, "bad")
    (root / ".memzoi" / "config.toml").unlink()
    zuno = tmp_path / "zuno"
    zuno.mkdir()
    hostile(zuno / "memzoi.toml", "zero")
    done = run(["memzoi", "resident", "show", "--json"], root, {**env, "ZUNO_CONFIG_DIR": str(zuno)})
    clean(done.stdout + done.stderr)
    assert "is a character device, not a regular file" in done.stdout + done.stderr
