"""The language server's analysis cache keeps open documents and a bounded number of closed files."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings, strategies as st
from pygls.uris import from_fs_path

from memzoi_lsp.documents import Documents, path_to_uri, uri_key

from ..test_framing_yaml import VALID


class _Doc(SimpleNamespace):
    pass


def test_closed_file_analyses_are_bounded_and_open_ones_kept(tmp_path):
    records = tmp_path / ".memzoi" / "records"
    records.mkdir(parents=True)
    uris = []
    for i in range(30):
        p = records / f"rec-{i}.md"
        p.write_text(VALID.replace("rec-x", f"rec-{i}"), encoding="utf-8")
        uris.append(path_to_uri(p))
    opened = uris[0]
    ws = SimpleNamespace(
        text_documents={uri_key(opened): _Doc(uri=opened, source=VALID.replace("rec-x", "rec-0"), version=3)}
    )
    docs = Documents(lambda: ws)
    docs.max_closed = 10
    for uri in uris:
        assert docs.snapshot(uri) is not None
    assert len(docs._cache) == 11  # ten closed files and the open document
    assert uri_key(opened) in docs._cache and uri_key(uris[-1]) in docs._cache
    assert uri_key(uris[1]) not in docs._cache  # least recently used closed file went first
    before = docs.analyses
    snap = docs.snapshot(uris[1])  # evicted: analysed again from disk, same result
    assert snap.analysis.findings == [] and docs.analyses == before + 1
    docs.snapshot(opened)
    assert docs.analyses == before + 1  # the open document stayed cached


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab/._~-Z09 %öé:@+#?\\", max_size=20))
def test_a_files_uri_is_pygls_s_whatever_the_path(rest):
    # path_to_uri's shortcut for plain paths gives what pygls gives for every path
    for path in ("/" + rest, rest, "/home/reviewer/project/.memzoi/records/" + rest):
        try:
            want = from_fs_path(path) or Path(path).as_uri()
        except ValueError:  # pygls refuses a path such as "//": so does path_to_uri, by asking pygls
            with pytest.raises(ValueError):
                path_to_uri(path)
            continue
        assert path_to_uri(path) == want, path
