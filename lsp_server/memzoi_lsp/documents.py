"""Document access for the server: the text of a URI (editor buffer when open, disk otherwise) and its core
analysis, cached by content hash.

Open documents are analysed from the editor's text (pygls has already applied every ``didChange`` to it; this
module only reads), with the findings only the bytes of their file on disk give (``invalid_encoding``, ``bom``,
``file_too_large``: :mod:`memzoi.judge.diskbytes`) merged in once :mod:`.diskview` has read them. Closed files are read as bytes and decoded by the core, so CRLF and invalid UTF-8 are seen
exactly as on disk (pygls's disk fallback would universalise newlines).
"""

from __future__ import annotations

import functools
import logging
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, unquote_to_bytes, urlsplit

import blake3
from pygls.uris import from_fs_path, to_fs_path

if TYPE_CHECKING:
    from pygls.workspace import Workspace

    from memzoi.judge.analysis import Analysis
    from memzoi.judge.diskbytes import DiskBytes

log = logging.getLogger("memzoi_lsp.documents")


def uri_to_path(uri: str) -> Path | None:
    """File-system path of a ``file:`` URI; ``None`` for other schemes (``untitled:``, …)."""
    try:
        p = to_fs_path(uri)
    except Exception:  # malformed URI from a client: treat as non-file
        return None
    if p and "\ufffd" in p and os.sep == "/":
        # percent-encoded bytes that are not UTF-8 (pygls decodes them to U+FFFD, a path naming no file): the
        # name's raw bytes, decoded as the file system's calls decode them (surrogateescape)
        parts = urlsplit(uri)
        if not parts.netloc:
            p = os.fsdecode(unquote_to_bytes(parts.path))
    return Path(p) if p else None


#: :func:`uri_to_path` of the URIs of open documents, which :meth:`Documents.open_uri_for` compares with every file
#: the scan publishes (a pure function of the string; a few hundred open documents at most).
_open_path = functools.lru_cache(maxsize=512)(uri_to_path)


def _text_digest(text: str) -> bytes:
    return blake3.blake3(text.encode("utf-8", "surrogatepass")).digest()


#: A file modified this recently (seconds) when its load is noted may have changed between the editor's read and
#: the server's notice of it (a busy server takes ``didOpen`` late): its signature then vouches for nothing.
RECENT_S = 2.0


def _signature(path: Path | None, *, noted: bool = False) -> tuple[int, int, int] | None:
    try:
        st = path.stat() if path is not None else None
    except OSError:
        return None
    if st is None or (noted and time.time() - st.st_mtime < RECENT_S):
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def path_to_uri(path: str | os.PathLike[str]) -> str:
    """``file:`` URI of ``path`` (pygls's :func:`~pygls.uris.from_fs_path`). An absolute POSIX path of characters
    that URIs never quote (letters, digits, ``/._~-``) is its own URI path, made without pygls's parse and quote
    (0.5 against 3.5 µs: the scan makes the URI of every file of the project; ``tests/lsp/test_documents_cache.py``
    holds both equal)."""
    text = str(path)
    if os.sep == "/" and _PLAIN(text):
        return "file://" + text
    try:
        return from_fs_path(text) or Path(path).as_uri()
    except UnicodeEncodeError:  # a name that is not UTF-8 (surrogateescape): its raw bytes, percent-encoded
        return Path(text).as_uri()


#: an absolute path that :func:`path_to_uri` gives as is: no character a URI quotes, no empty (``//``) authority
_PLAIN = re.compile(r"/(?!/)[A-Za-z0-9/._~-]*\Z").match


def _real(path: Path) -> str:
    """``path`` with the symbolic links of its folders resolved (the file itself kept: a linked record is its own
    file)."""
    return os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(path))), os.path.basename(path))


def uri_key(uri: str) -> str:
    """Normalised cache key of a URI (pygls keys documents by the unquoted URI; so do we)."""
    return unquote(uri)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One consistent view of a document: its URI, path, exact text, editor version (``None`` when read from
    disk), whether it is open in the editor, and the core analysis of that text."""

    uri: str
    path: Path | None
    text: str
    version: int | None
    is_open: bool
    analysis: Analysis


class Documents:
    """Analysis cache keyed by URI, holding the content hash of the text analysed.

    Thread-safe: the workspace scan fills it from a worker thread while handlers read it on the event loop.
    """

    #: Analyses of closed files kept at most (least recently used evicted). Full analyses are for open documents
    #: (issue 29: an analysis holds the YAML tree and the model, ~20 KiB); closed files are held as compact verdicts
    #: (``ProjectState.verdicts``). The few kept here are those a watcher batch or a request just made, so that the
    #: publish and the re-index after it take the same analysis. Open documents are always kept; an evicted file is
    #: analysed again from disk on demand.
    max_closed = 64

    def __init__(self, workspace_getter: Callable[[], Workspace]) -> None:
        self._workspace = workspace_getter
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, tuple[bytes, Analysis]] = OrderedDict()
        self.analyses = 0  # number of core analyses actually run (the cache's misses), for tests and logs
        # Open documents whose file the server itself rewrote while the buffer held the text from before: key ->
        # the buffer's version then. Until the client reloads the buffer (a new version), the file on disk governs
        # the document (its diagnostics and the cross-file facts), so nothing is judged from stale text.
        self.behind: dict[str, int | None] = {}
        # Open documents: the byte findings of their file on disk (memzoi.judge.diskbytes), merged into the analysis
        # of the editor's text, and the turn of the latest read of them (an older read that ends later is dropped).
        self._disk: dict[str, DiskBytes] = {}
        self._disk_turns: dict[str, int] = {}
        # Open documents: key -> (digest of the text the editor last loaded from or saved to disk, the file's
        # (mtime_ns, size, inode) then), so a refusal tells unsaved edits from a file changed on disk meanwhile.
        self.loaded: dict[str, tuple[bytes, tuple[int, int, int] | None]] = {}

    def note_loaded(self, uri: str, text: str) -> None:
        """Note that the open document ``uri`` holds ``text`` as the editor loaded it from (``didOpen``) or saved it
        to (``didSave``) the file, with the file's stat signature now (none when it was modified within
        :data:`RECENT_S`: any later difference from the disk then counts as a change on disk)."""
        self.loaded[uri_key(uri)] = (_text_digest(text), _signature(uri_to_path(uri), noted=True))

    def load_state(self, uri: str, text: str) -> tuple[bool, bool]:
        """``(edited, disk_changed)`` of the open document ``uri`` holding ``text``: whether the text differs from
        what the editor last loaded or saved, and whether the file changed on disk since then: its text is not the
        loaded one, and its stat signature does not show it untouched since (a buffer restored with unsaved text,
        e.g. VS Code's hot exit, is loaded unlike the disk). Unknown (no ``didOpen`` seen) or unreadable:
        ``(True, False)``, an unsaved buffer as before. Reads the file (a refusal's path only)."""
        known = self.loaded.get(uri_key(uri))
        path = uri_to_path(uri)
        if known is None or path is None:
            return True, False
        digest, signature = known
        try:
            disk = path.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            return True, False
        untouched = signature is not None and _signature(path) == signature
        return _text_digest(text) != digest, _text_digest(disk) != digest and not untouched

    def forget_loaded(self, uri: str) -> None:
        """The editor closed ``uri``: nothing of its load is kept."""
        self.loaded.pop(uri_key(uri), None)

    def is_open(self, uri: str) -> bool:
        """True when the editor has ``uri`` open."""
        return uri_key(uri) in self._workspace().text_documents

    def mark_behind(self, uri: str) -> None:
        """Note that the open document ``uri`` holds text older than its file, which the server just wrote."""
        doc = self._workspace().text_documents.get(uri_key(uri))
        if doc is not None:
            self.behind[uri_key(uri)] = doc.version
            path = uri_to_path(uri)
            try:  # the client reloads the buffer from these bytes: that text is then unedited
                text = path.read_bytes().decode("utf-8", errors="replace") if path is not None else None
            except OSError:
                text = None
            if text is not None:
                self.note_loaded(uri, text)

    def is_behind(self, uri: str) -> bool:
        """True while the open document ``uri`` still holds the text from before a write of the server (its
        version unchanged since); the entry goes once the client sends another version or closes it."""
        key = uri_key(uri)
        if key not in self.behind:
            return False
        doc = self._workspace().text_documents.get(key)
        if doc is None or doc.version != self.behind[key]:
            self.behind.pop(key, None)
            return False
        return True

    def disk_turn(self, uri: str) -> int:
        """Start a read of the bytes on disk of the open document ``uri``: its turn, for :meth:`set_disk`."""
        key = uri_key(uri)
        with self._lock:
            turn = self._disk_turns.get(key, 0) + 1
            self._disk_turns[key] = turn
            return turn

    def set_disk(self, uri: str, turn: int, disk: DiskBytes | None) -> bool:
        """Hold ``disk`` (``None``: no file, or no byte finding) as the byte findings of the file of the open
        document ``uri``, read at ``turn`` (:meth:`disk_turn`); a read that a later one overtook is dropped. True
        when what the document shows changes (its analysis then merges the new findings,
        :func:`memzoi.judge.diskbytes.editor_analysis`)."""
        key = uri_key(uri)
        if disk is not None and not disk.placed:
            disk = None
        with self._lock:
            if self._disk_turns.get(key) != turn:
                return False
            old = self._disk.pop(key, None)
            if disk is not None:
                self._disk[key] = disk
        return (old.placed if old else ()) != (disk.placed if disk else ())

    def forget_disk(self, uri: str) -> None:
        """The document ``uri`` was closed: its byte findings go (a read under way is dropped when it ends)."""
        key = uri_key(uri)
        with self._lock:
            self._disk.pop(key, None)
            self._disk_turns.pop(key, None)

    def open_uri_for(self, path: str | os.PathLike[str] | None) -> str | None:
        """The URI under which the editor has the file ``path`` open, whatever the spelling (a symbolic link of a
        parent folder, another percent-encoding), or ``None``: the file's diagnostics then come from that buffer's
        text and are published under that URI, never from the disk (issue 28)."""
        if path is None:
            return None
        name = os.path.basename(path)
        want: str | None = None
        for doc in list(self._workspace().text_documents.values()):
            p = _open_path(doc.uri)  # the scan asks this for every file it publishes: each URI converted once
            if p is None or p.name != name:  # cheap first
                continue
            want = want or _real(Path(path))
            if p == Path(path) or _real(p) == want:
                return str(doc.uri)
        return None

    def open_uris(self) -> list[str]:
        """URIs of the documents open in the editor (their original spelling)."""
        return [d.uri for d in list(self._workspace().text_documents.values())]

    def snapshot(self, uri: str) -> Snapshot | None:
        """The document's current snapshot, or ``None`` when it is neither open nor a readable file."""
        from memzoi.judge.analysis import analyze_bytes, analyze_text  # noqa: PLC0415 lazy: start-up
        from memzoi.judge.diskbytes import editor_analysis  # noqa: PLC0415 lazy: start-up

        key = uri_key(uri)
        doc = self._workspace().text_documents.get(key)
        path = uri_to_path(uri)
        if doc is not None and self.is_behind(uri) and path is not None and path.is_file():
            doc = None  # the server rewrote the file: the disk governs until the client reloads the buffer
        if doc is not None:
            text = doc.source
            # the editor's text, with the byte findings of its file on disk (what check reads: promise 3)
            disk = self._disk.get(key)
            digest = b"t" + _text_digest(text)
            digest += disk.revision.encode() if disk is not None else b""
            analysis = self._cached(key, digest, lambda: editor_analysis(analyze_text(text, path), path, disk))
            return Snapshot(doc.uri, path, text, doc.version, True, analysis)
        if path is None:
            return None
        try:
            data = path.read_bytes()
        except OSError:
            return None
        digest = b"b" + blake3.blake3(data).digest()
        analysis = self._cached(key, digest, lambda: analyze_bytes(data, path))
        return Snapshot(uri, path, analysis.text, None, False, analysis)

    def on_disk(self, path: Path) -> tuple[bytes, os.stat_result, Analysis] | None:
        """The file's bytes, stat and analysis as they are on disk (for the index, which holds what is committed,
        never an editor's unsaved text), or ``None`` when it cannot be read. A closed file's analysis comes from
        the cache when its bytes are the ones analysed (nothing is analysed twice); an open document's cache entry
        is its editor text, so its disk bytes are analysed apart, without replacing that entry."""
        from memzoi.judge.analysis import analyze_bytes  # noqa: PLC0415 lazy: start-up
        from memzoi.judge.barrier import failed_analysis  # noqa: PLC0415 lazy: start-up

        try:
            data = path.read_bytes()
            st = path.stat()
        except OSError:
            return None
        uri = path_to_uri(path)
        if uri_key(uri) in self._workspace().text_documents:
            try:
                return data, st, analyze_bytes(data, path)
            except Exception as err:  # the barrier, as in _cached
                return data, st, failed_analysis(err, path)
        digest = b"b" + blake3.blake3(data).digest()
        return data, st, self._cached(uri_key(uri), digest, lambda: analyze_bytes(data, path))

    def forget(self, uri: str) -> None:
        """Drop the cached analysis of ``uri`` (file deleted or renamed)."""
        with self._lock:
            self._cache.pop(uri_key(uri), None)

    def _cached(self, key: str, digest: bytes, compute: Callable[[], Analysis]) -> Analysis:
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None and hit[0] == digest:
                self._cache.move_to_end(key)
                return hit[1]
        try:
            analysis = compute()
        except Exception as err:  # the core is total by contract; if it ever is not, the file says so
            from memzoi.judge.barrier import failed_analysis  # noqa: PLC0415 lazy: start-up

            analysis = failed_analysis(err, uri_to_path(key))
        with self._lock:
            self._cache[key] = (digest, analysis)
            self._cache.move_to_end(key)
            self.analyses += 1
            self._evict()
        return analysis

    def _evict(self) -> None:
        """Drop least recently used analyses of closed files beyond :attr:`max_closed` (lock held)."""
        if len(self._cache) <= self.max_closed:
            return
        open_keys = set(self._workspace().text_documents)
        excess = len(self._cache) - self.max_closed - sum(1 for k in open_keys if k in self._cache)
        # Oldest first, stopping as soon as enough are found: usually one key, not a copy of the whole cache.
        victims: list[str] = []
        for key in self._cache:
            if len(victims) >= excess:
                break
            if key not in open_keys:
                victims.append(key)
        for key in victims:
            del self._cache[key]
