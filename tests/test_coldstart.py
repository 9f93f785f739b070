"""A cold scan told as its project is registered (:mod:`memzoi.runs.coldstart`): the workers' fork server starts
then only for a project without a store that holds many files, preloading the module the scan's workers run."""

from __future__ import annotations

from pathlib import Path

import pytest

from memzoi.base import parallel
from memzoi.runs import coldstart, scanverdicts
from memzoi.stores.fileentry import entry_chunk
from memzoi.stores.store import store_path


def _plane(root: Path, records: int, packets: int = 0) -> Path:
    md = root / ".memzoi"
    for i in range(records):
        folder = md / "records" / (f"area-{i % 3}" if i % 2 else "")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"r-{i}.md").write_text("---\n---\n", encoding="utf-8")
    for i in range(packets):
        folder = md / "proposals" / "pending"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"p-{i}.md").write_text("---\n---\n", encoding="utf-8")
    (md / "records" / "notes.txt").write_text("not Markdown", encoding="utf-8")
    hidden = md / ".trash"
    hidden.mkdir()
    for i in range(coldstart.PARALLEL_THRESHOLD):
        (hidden / f"h-{i}.md").write_text("", encoding="utf-8")
    return md


@pytest.mark.parametrize(("records", "packets", "many"), [(299, 0, False), (250, 49, False), (250, 50, True)])
def test_many_files_counts_markdown_names_in_every_folder_but_hidden_ones(tmp_path, records, packets, many):
    assert coldstart.many_files(_plane(tmp_path, records, packets)) is many


def test_a_missing_or_unreadable_folder_holds_no_files(tmp_path):
    assert not coldstart.many_files(tmp_path / "absent", at_least=1)
    assert coldstart.many_files(_plane(tmp_path, 1), at_least=1)


def test_likely_cold_without_a_store_and_with_many_files_only(tmp_path, monkeypatch):
    started: list[str] = []
    monkeypatch.setattr(parallel, "start_helper", lambda module: started.append(module) or True)
    few, many = tmp_path / "few", tmp_path / "many"
    _plane(few, 10)
    _plane(many, coldstart.PARALLEL_THRESHOLD)
    assert not coldstart.likely_cold(few, few / ".memzoi")
    assert not coldstart.prestart(few, few / ".memzoi") and started == []
    assert coldstart.likely_cold(many, many / ".memzoi")
    assert coldstart.prestart(many, many / ".memzoi") and started == [coldstart.WORKER_MODULE]
    store = store_path(many)  # where the store is looked for is where the stores module puts it
    store.parent.mkdir(parents=True)
    store.write_bytes(b"")
    assert not coldstart.likely_cold(many, many / ".memzoi")
    assert not coldstart.prestart(many, many / ".memzoi") and len(started) == 1


def test_the_fork_server_preloads_what_the_scan_s_workers_run():
    assert coldstart.WORKER_MODULE == entry_chunk.__module__
    assert scanverdicts.PARALLEL_THRESHOLD is coldstart.PARALLEL_THRESHOLD
