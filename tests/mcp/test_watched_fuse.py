"""On a real FUSE mount (``bindfs --ctime-from-mtime``, as sshfs and rclone behave) the MCP server's change feed
relies on no notification: a change made below the mount (here in its source folder, as another machine writes
to an sshfs share) raises none on the mount, and each refresh walks and hashes as without a watcher (issue 29):
an edit keeping size and mtime and a new file, both made below the mount, are seen by the next call.
Needs bindfs and ``/dev/fuse`` (``scripts/install_editor_prereqs.sh``); skipped where the mount cannot be made."""

from __future__ import annotations

import os

import pytest

from memzoi.agent import recall
from memzoi.base import freshness
from memzoi.stores import changefeed
from memzoi_mcp.watching import Watching

from .. import builders
from ..test_freshness import token
from ..test_fuse_freshness import mounted, planted  # noqa: F401 - fixture
from .test_watched_freshness import opened

pytestmark = pytest.mark.editor_packages


def test_a_change_below_a_fuse_mount_is_seen_while_the_watcher_runs(mounted, monkeypatch):  # noqa: F811
    monkeypatch.setattr(freshness, "RACY_NS", -1)  # only the file system's rule decides
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)
    watching = Watching()
    watching.serve(mounted)
    feed = changefeed.feed_of(mounted)
    assert feed is not None and opened(feed)
    try:
        assert "[redacted]" not in recall.get_memory(mounted, "beta")["body"]
        source = mounted.parent / "src" / ".memzoi/records/beta.md"
        before = os.stat(source)
        source.write_bytes(planted(source))  # below the mount: no notification reaches its watcher
        os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
        got = recall.get_memory(mounted, "beta")  # judged from the new text: refused for a secret, withheld
        assert got["withheld"] and "credential_token" in got["reasons"] and token() not in str(got)
        new = builders.record("gamma", title="The gamma record", body="Body text of gamma.")
        builders.write(mounted.parent / "src", ".memzoi/records/gamma.md", new)  # a new file, below the mount
        assert recall.get_memory(mounted, "gamma")["id"] == "gamma"
        assert feed.served == 0 and "not relied on" in feed.why
    finally:
        watching.stop()
