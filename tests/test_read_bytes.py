"""Reading a file without the buffered file objects (:func:`memzoi.base.freshness.read_bytes`, and
:func:`~memzoi.base.freshness.read_stable`) gives exactly what ``open(path, "rb").read()`` gives, and fails as it
fails."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memzoi.base import freshness
from memzoi.judge.analysis import analyze_path

#: around the sizes where the reads split: one chunk, its boundary, several chunks
_SIZES = [0, 1, 2047, 65535, 65536, 65537, 3 * 65536 + 5]


def _plain(path: Path) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


@pytest.mark.parametrize("size", _SIZES)
def test_the_bytes_are_those_of_a_plain_read(tmp_path, size):
    path = tmp_path / "f.md"
    path.write_bytes(os.urandom(size))
    assert freshness.read_bytes(path) == _plain(path) == path.read_bytes()
    data, stamp, _ = freshness.read_stable(path)
    st_ = os.stat(path)
    assert data == _plain(path) and stamp == (st_.st_size, st_.st_mtime_ns, st_.st_ino, st_.st_ctime_ns)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=70000))
def test_any_bytes_read_back_whole(tmp_path, data):
    path = tmp_path / "g.md"
    path.write_bytes(data)
    assert freshness.read_bytes(path) == data
    assert freshness.read_stable(path)[0] == data


def _refused_to(monkeypatch, path: Path) -> None:
    """The kernel's answer to a user who may not read ``path`` (EACCES), given to ``os.open`` and ``open`` alike:
    for a user whom a mode of 0 does not stop (root, as on CI)."""
    import builtins

    def refuse(real):
        def opener(file, *args, **kwargs):
            if isinstance(file, (str, os.PathLike)) and os.fspath(file) == str(path):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
            return real(file, *args, **kwargs)

        return opener

    monkeypatch.setattr(os, "open", refuse(os.open))
    monkeypatch.setattr(builtins, "open", refuse(builtins.open))


@pytest.mark.parametrize("case", ["missing", "folder", "unreadable"])
def test_it_fails_as_a_plain_read_fails(tmp_path, monkeypatch, case):
    path = tmp_path / "x.md"
    if case == "folder":
        path.mkdir()
    elif case == "unreadable":
        path.write_text("x", encoding="utf-8")
        path.chmod(0)
        if os.access(path, os.R_OK):  # root reads anything: the refusal it would get otherwise
            _refused_to(monkeypatch, path)
    with pytest.raises(OSError) as plain:
        _plain(path)
    with pytest.raises(OSError) as ours:
        freshness.read_bytes(path)
    assert (type(ours.value), ours.value.errno, ours.value.strerror) == (
        type(plain.value),
        plain.value.errno,
        plain.value.strerror,
    )
    assert freshness.read_stable(path) is None
    # the analysis names why, as it did with a plain read
    (only,) = analyze_path(path).findings
    assert only.code == "canonical_path" and plain.value.strerror in only.message
