"""The cyclic garbage collector during a cold scan (issue 29, cold server scan): while the workers' results of a
long analysis are taken in, no automatic collection runs in the server process (``memzoi.base.gcpause.hold``, as
``memzoi check`` runs with the collector off); the start-up's pause, and with it the hold, ends with one full
collection after the scan's end (``scan._resume_collector_later``), not at the first chunk."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from memzoi.base import gcpause
from memzoi.runs import scanverdicts
from memzoi_lsp import scan
from memzoi_lsp.scanjobs import ScanJobs


@pytest.fixture
def paused() -> Iterator[None]:
    """The start-up's pause, as ``memzoi-lsp`` begins with it; the test process's collector as it was after."""
    assert gc.isenabled()
    thresholds, frozen = gc.get_threshold(), gc.get_freeze_count()
    assert gcpause.pause() is True
    yield
    gcpause.resume()
    gc.set_threshold(*thresholds)
    if gc.get_freeze_count() > frozen:
        gc.unfreeze()


async def _intake(monkeypatch: pytest.MonkeyPatch, files: int) -> list[tuple[bool, int]]:
    """Run the scan's intake of ``files`` analysed files (the analysis and the publishing faked); for each chunk
    taken, whether the start-up's pause still held and the young generation's threshold (0: no automatic
    collection)."""
    seen: list[tuple[bool, int]] = []
    root = Path("/nonexistent/ws")
    project = SimpleNamespace(root=root)
    with ScanJobs() as executor:
        ls: Any = SimpleNamespace(stopping=False, projects={root: project}, scan_executor=executor)
        monkeypatch.setattr(scanverdicts, "analyse", lambda paths, ctx, index_root: (None for _ in paths))
        monkeypatch.setattr(scan, "_take", lambda *args: seen.append((gcpause.paused(), gc.get_threshold()[0])))
        misses = [(f"file:///f{i}.md", f"/nonexistent/ws/.memzoi/records/f{i}.md") for i in range(files)]
        start: Any = SimpleNamespace(extra=None)
        done = await scan._analyse_misses(ls, project, misses, None, None, start, lambda n: None)  # type: ignore[arg-type]
    assert done
    return seen


async def test_a_cold_scans_results_are_taken_in_with_the_collector_held(
    paused: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = await _intake(monkeypatch, max(scanverdicts.PARALLEL_THRESHOLD, 3 * scan.CHUNK))
    assert len(seen) >= 3
    assert all(still for still, _ in seen), "the start-up's pause ended before every file was taken in"
    assert all(young == 0 for _, young in seen), "automatic collections ran while the results were taken in"
    assert gcpause.resume() is not None  # what the scan does once it has ended
    assert gc.get_threshold()[0] > 0


async def test_a_short_analysis_leaves_the_young_collections_running(
    paused: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = await _intake(monkeypatch, 5)
    assert seen == [(True, gc.get_threshold()[0])] and seen[0][1] > 0


async def test_the_scans_end_is_sent_before_the_full_collection(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one full collection that ends the pause runs in the loop's turn after the one that wrote the scan's
    progress end, so the client is told the scan is done first (issue 29: cold server scan, 0.1–0.2 s at 10,000
    files)."""
    import asyncio
    import io

    from memzoi_lsp.output import GatheredWriter

    stream = io.BytesIO()
    writer = GatheredWriter(stream)
    sent_when_collected: list[bytes] = []
    monkeypatch.setattr(gcpause, "resume", lambda: sent_when_collected.append(stream.getvalue()))
    writer.write(b"the progress end")  # what _finish writes, in the same turn
    scan._resume_collector_later()
    assert sent_when_collected == []
    for _ in range(3):
        await asyncio.sleep(0)
    assert sent_when_collected == [b"the progress end"]


async def test_the_stores_last_entries_are_written_while_the_scans_end_is_published() -> None:
    """At the end of a scan the verdict cache's last save runs on the scan thread while the loop publishes the
    cross-file findings (issue 29: the cold scan's tail), not after them."""
    import threading

    started, published = threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    class Cache:
        def save(self, complete: bool) -> bool:
            started.set()
            seen["publish ran meanwhile"] = published.wait(10)
            return True

    def on_project_scanned(project: object) -> None:
        seen["save had started"] = started.wait(10)
        published.set()

    with ScanJobs() as executor:
        ls: Any = SimpleNamespace(
            scan_executor=executor, on_project_scanned=on_project_scanned, flush_republish=lambda: None
        )
        await scan._scanned(ls, SimpleNamespace(), Cache())  # type: ignore[arg-type]
    assert seen == {"save had started": True, "publish ran meanwhile": True}
