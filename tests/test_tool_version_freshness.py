"""A tool-version change (an upgrade: memzoi's ``__version__`` differs, the installed code being the same) is a new
tool stamp (:func:`memzoi.stores.toolstamp.tool_stamp`), under which nothing stored by the old version is served
(issue 29, Show: freshness tests): ``check`` and ``check FILE`` analyse again (their output still byte for byte
``--no-cache``'s), the server's warm start takes no file from the store, and ``memzoi search`` and the agent's
recall serve no row of the old version. A code change under the same version is held in
``tests/test_freshness.py``, ``tests/test_check_file_freshness.py``, ``tests/test_warm_scan_freshness.py`` and
``tests/test_index_inputs.py``."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from memzoi.stores import toolstamp
from memzoi.stores.index import Index

from .index_setup import cli_records
from .mcp.conftest import FACT_ID, home, project  # noqa: F401 - fixtures
from .test_freshness import closed, repo, reported  # noqa: F401 - fixtures
from .test_index_inputs import agent_hits, mcp_hits
from .test_verdict_cache import counts  # noqa: F401 - fixture
from .test_warm_scan_freshness import NAMES, filled, missed


@pytest.fixture
def upgrade(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], None]]:
    """Calling it makes memzoi's version another one (the installed code unchanged) until the test ends."""

    def change() -> None:
        toolstamp.tool_stamp.cache_clear()
        monkeypatch.setattr(toolstamp, "__version__", toolstamp.__version__ + ".post1")

    yield change
    toolstamp.tool_stamp.cache_clear()


def test_the_stamp_follows_the_version(upgrade):
    before = toolstamp.tool_stamp()
    upgrade()
    assert toolstamp.tool_stamp() != before


@pytest.mark.parametrize("one_file", [False, True], ids=["check", "check-FILE"])
def test_check_analyses_again(repo, capsys, counts, closed, upgrade, one_file):
    target = repo / ".memzoi/records/beta.md" if one_file else repo / ".memzoi"
    files = 1 if one_file else 3
    reported(capsys, target)
    counts.reset()
    reported(capsys, target)
    assert counts["analysed"] == files  # --no-cache only
    upgrade()
    counts.reset()
    reported(capsys, target)
    assert counts["analysed"] >= 2 * files  # and the cached run again (check FILE: the others' facts too)


def test_the_warm_start_takes_nothing_from_the_store(repo, capsys, closed, upgrade):
    filled(capsys, repo)
    upgrade()
    assert missed(repo) >= NAMES


def test_search_and_recall_serve_no_row_of_the_old_version(project, capsys, upgrade):
    assert FACT_ID in cli_records(capsys, project, "hatch")
    with Index(project) as ix:  # a row of the old version, marked so that serving it shows
        ix.db.execute("UPDATE records SET body = 'stale zebrafish' WHERE id = ?", (FACT_ID,))
    upgrade()
    assert agent_hits(project, "zebrafish") == {} and mcp_hits(project, "zebrafish") == {}
    assert cli_records(capsys, project, "zebrafish") == {} and FACT_ID in agent_hits(project, "hatch")
