"""Memzoi's ``credentialed_url`` rule (``detectors.rs::contains_credentialed_url``, reference §3.3): URL candidates
and the test Memzoi's ``url`` crate makes of each, read as the WHATWG URL standard reads a URL."""

from __future__ import annotations

import re
from urllib.parse import unquote_plus

from .base import Hit
from .memzoi_source import SENSITIVE_QUERY_NAMES, URL_CANDIDATE_SOURCE, rust_to_python

_URL_CANDIDATE = re.compile(rust_to_python(URL_CANDIDATE_SOURCE))
#: what (?i)[a-z0-9+.-] matches (with the letters case-insensitive matching folds onto ASCII)
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-\u017f\u212a\u0130\u0131")
_SPECIAL = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21, "file": None}
_FORBIDDEN_HOST = frozenset("\x00\t\n\r #/:<>?@[\\]^|")


def url_hits(text: str) -> list[Hit]:
    """``credentialed_url``: a URL candidate (trailing ``.,)]}`` trimmed) that parses and has a user name, a
    password, or a query pair whose lower-cased name is or ends with one of :data:`SENSITIVE_QUERY_NAMES` and
    whose value is not blank (``detectors.rs::contains_credentialed_url``). Candidates are looked for only just
    before each ``://`` (a candidate's scheme is 2 to 16 characters without ``:``)."""
    out: list[Hit] = []
    for m in url_candidates(text):
        candidate = m.group(0).rstrip(".,)]}")
        if credentialed(candidate):
            out.append(
                Hit(
                    "credentialed_url",
                    m.start(),
                    m.start() + len(candidate),
                    "URL with credentials (Memzoi rule `credentialed_url`)",
                    candidate,
                    memzoi="credentialed_url",
                )
            )
    return out


def url_candidates(text: str) -> list[re.Match[str]]:
    """``list(URL_CANDIDATE.finditer(text))``, trying the pattern only in the 16 characters before each ``://``."""
    out: list[re.Match[str]] = []
    reach = 0
    i = text.find("://")
    while i >= 0:
        if i >= reach:
            first = i
            while first > max(reach, i - 16) and text[first - 1] in _SCHEME_CHARS:
                first -= 1  # a match starts inside the run of scheme characters before "://"
            for start in range(first, i - 1):
                m = _URL_CANDIDATE.match(text, start)
                if m is not None:
                    out.append(m)
                    reach = m.end()
                    break
        i = text.find("://", i + 1)
    return out


def credentialed(url: str) -> bool:
    """Memzoi's test on one candidate, with the URL read as the WHATWG URL standard (Rust ``url``) reads it:
    user info is what precedes the last ``@`` of the authority; an empty password is no password; a URL whose
    port or host does not parse counts as nothing."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return False
    scheme = scheme.lower()
    special = scheme in _SPECIAL
    stops = "/?#\\" if special else "/?#"
    end = next((i for i, c in enumerate(rest) if c in stops), len(rest))
    authority, tail = rest[:end], rest[end:]
    userinfo, at, hostport = authority.rpartition("@")
    if not _host_parses(hostport, special, scheme):
        return False
    if at:
        user, colon, password = userinfo.partition(":")
        if user or (colon and password):
            return True
    query = tail.split("#", 1)[0]
    if special:
        query = query.replace("\\", "/")
    if "?" not in query:
        return False
    for pair in query.split("?", 1)[1].split("&"):
        if not pair:
            continue
        key, _, value = pair.partition("=")
        name = unquote_plus(key).lower()
        if any(name == n or name.endswith(n) for n in SENSITIVE_QUERY_NAMES) and unquote_plus(value).strip():
            return True
    return False


def _host_parses(hostport: str, special: bool, scheme: str) -> bool:
    if hostport.startswith("["):
        close = hostport.find("]")
        if close < 0:
            return False
        host, port = hostport[: close + 1], hostport[close + 1 :]
        if port and not port.startswith(":"):
            return False
        port = port[1:]
    else:
        host, _, port = hostport.partition(":")
        if any(c in _FORBIDDEN_HOST for c in host):
            return False
        if special and (any(c == "%" or ord(c) < 0x20 or c == "\x7f" for c in host) or (not host and scheme != "file")):
            return False
    if port and (not port.isascii() or not port.isdigit() or int(port) > 65535):
        return False
    return True
