"""``ChunkPool(total=...)`` (what ``memzoi rebuild`` uses): chunks shrink as the end nears (guided scheduling), so
the workers end together and the caller has few results left to take after the last one; without ``total`` every
chunk is ``chunksize`` jobs, as before."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings, strategies as st

from memzoi.base import parallel
from memzoi.base.parallel import GUIDED_LEAST, ChunkPool, can_fork


def _sizes(chunk: list[int]) -> list[int]:
    """Each job's result: the size of the chunk it was in, and the job itself (the order must hold)."""
    return [len(chunk) * 1_000_000 + j for j in chunk]


def _chunk_sizes(pool: ChunkPool[int, int], jobs: int) -> list[int]:
    for j in range(jobs):
        pool.add(j)
    results = pool.results()
    assert [r % 1_000_000 for r in results] == list(range(jobs))  # every job once, in the order added
    sizes: list[int] = []
    i = 0
    while i < len(results):
        size = results[i] // 1_000_000
        sizes.append(size)
        i += size
    return sizes


def test_a_known_total_gives_large_chunks_first_and_small_ones_last():
    pool: ChunkPool[int, int] = ChunkPool(_sizes, workers=2, chunksize=687, start_at=400, total=11_000)
    sizes = _chunk_sizes(pool, 11_000)
    assert sizes[0] == 687 and sizes[-1] <= GUIDED_LEAST
    assert sizes == sorted(sizes, reverse=True)
    # the last quarter of the jobs goes in chunks of at most an eighth of it: the workers end within a small chunk
    assert max(s for s, done in zip(sizes, _ends(sizes), strict=True) if done > 11_000 * 3 / 4) <= 11_000 / 4 / 4


def _ends(sizes: list[int]) -> list[int]:
    ends, total = [], 0
    for s in sizes:
        total += s
        ends.append(total)
    return ends


def test_without_a_total_every_chunk_is_chunksize():
    pool: ChunkPool[int, int] = ChunkPool(_sizes, workers=2, chunksize=100, start_at=400)
    assert _chunk_sizes(pool, 1_050) == [100] * 10 + [50]


@settings(max_examples=40, deadline=None)
@given(
    jobs=st.integers(min_value=0, max_value=2_000),
    chunksize=st.integers(min_value=1, max_value=800),
    workers=st.integers(min_value=1, max_value=8),
    off=st.integers(min_value=-50, max_value=50),
)
def test_guided_chunks_hold_every_job_once_within_their_bounds(jobs, chunksize, workers, off):
    # ``total`` may be wrong (a caller's estimate): every job is still done once, in order, in bounded chunks
    pool: ChunkPool[int, int] = ChunkPool(
        _sizes, workers=workers, chunksize=chunksize, start_at=10**9, total=max(0, jobs + off)
    )
    pool.workers = workers  # the chunks as a pool of this many workers makes them; none is started (start_at)
    sizes = _chunk_sizes(pool, jobs)
    assert sum(sizes) == jobs
    assert all(s <= chunksize for s in sizes)
    assert all(s >= min(GUIDED_LEAST, chunksize) for s in sizes[:-1])


@pytest.mark.skipif(not can_fork(), reason="forked workers")
def test_guided_chunks_in_forked_workers_give_every_result_in_order():
    pool: ChunkPool[int, int] = ChunkPool(_sizes, workers=2, chunksize=64, start_at=10, total=2_000)
    sizes = _chunk_sizes(pool, 2_000)
    assert sizes[-1] <= GUIDED_LEAST and sizes == sorted(sizes, reverse=True)
    assert os.getpid()  # the results came back from the workers, whole


def test_the_index_hands_its_pool_the_number_of_files_and_does_not_wait_for_its_workers(corpus, tmp_path, monkeypatch):
    import shutil

    from memzoi.stores.index import Index

    made: list[dict[str, object]] = []

    class Recorded(ChunkPool):  # type: ignore[type-arg]
        def __init__(self, *args: object, **kwargs: object) -> None:
            made.append(kwargs)
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(parallel, "ChunkPool", Recorded)
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    root = tmp_path / "proj"
    shutil.copytree(corpus / "memzoi-repo/.memzoi", root / ".memzoi")
    with Index(root, workers=1) as ix:
        result = ix.rebuild()
    assert [(m["total"], m["join"]) for m in made] == [(result.files, False)]
