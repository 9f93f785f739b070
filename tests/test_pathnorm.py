"""``memzoi.base.pathnorm``: the fast path of ``os.path.abspath`` for paths already absolute and normal."""

from __future__ import annotations

import os

from hypothesis import example, given, strategies as st

from memzoi.base.pathnorm import absolute, is_normal_absolute

_PART = st.sampled_from(["", ".", "..", "a", ".memzoi", "records", "x.md", "...", ".a", "a.", " "])


@given(st.lists(_PART, max_size=6), st.sampled_from(["", "/", "//", "///"]), st.sampled_from(["", "/"]))
@example(["a", "b"], "//", "")  # POSIX normpath keeps a leading `//`
@example([], "/", "")
def test_a_path_said_normal_is_what_abspath_gives(parts, lead, tail):
    path = lead + "/".join(parts) + tail
    if is_normal_absolute(path):
        assert os.path.abspath(path) == path
    assert absolute(path) == os.path.abspath(path)


def test_a_normal_path_is_returned_as_the_same_object():
    path = "".join(["/home/u/proj/.memzoi/records/", "a.md"])
    assert absolute(path) is path
    assert not is_normal_absolute("relative/a.md") and absolute("relative/a.md") == os.path.abspath("relative/a.md")
    for odd in ("/a/./b", "/a/../b", "/a//b", "/a/b/", "/a/.", "/a/..", "//a"):
        assert not is_normal_absolute(odd), odd
