"""Mutations of real Memzoi files for the whole-pipeline property tests and the fuzz script.

Every mutation is a pure function of the seed bytes and four parameters, so hypothesis can choose (and shrink)
them in the test suite while ``tests/benchmarks/fuzz_pipeline.py`` draws them from a seeded ``random.Random``.
The kinds cover what an attacker or an unlucky editor produces: random insertions and deletions, byte flips,
truncation, deep flow and block nesting (far past the nesting limit), wide mappings and lists, huge lines, every
line-break convention, byte order marks, invalid UTF-8, control and separator characters, YAML anchors, aliases,
tags and complex keys, tab indentation, stray frontmatter markers and tokens with deeply nested JSON headers.
"""

from __future__ import annotations

import base64
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Where a mutated file is placed in a workspace (its role decides which checks run).
PLACES = (
    "records/m.md",
    "records/deep/er/m.md",
    "proposals/pending/m.md",
    "proposals/resolved/applied/m.md",
    "proposals/resolved/rejected/m.md",
    "records/index.md",
)

_YAML_BITS = (
    b"&a ",
    b"*a",
    b"!!binary ",
    b"!tag ",
    b"? ",
    b"<<: *a\n",
    b"- ",
    b": ",
    b"{",
    b"}",
    b"[",
    b"]",
    b"|\n",
    b">-\n",
    b"'",
    b'"',
    b"#",
    b"%YAML 1.2\n",
    b"---\n",
    b"...\n",
    b"\t",
    b"~",
    b"null",
    b"0x1F",
    b".inf",
    b"@",
    b"`",
)
_CONTROLS = ("\x00", "\x0b", "\x1b", "\x7f", "\u0085", "\u2028", "\u2029", "\ufeff", "\u200b", "\ud800")
_BAD_UTF8 = (b"\xff", b"\xfe", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98", b"\xed\xa0\x80", b"\xc0\xaf")


def seeds() -> list[bytes]:
    """The example workspace's records and packets (always present), as bytes."""
    return [p.read_bytes() for p in sorted((ROOT / "examples" / ".memzoi").rglob("*.md"))]


def _at(data: bytes, at: float) -> int:
    return min(len(data), max(0, int(at * len(data))))


def _line_start(data: bytes, at: float) -> int:
    i = _at(data, at)
    j = data.rfind(b"\n", 0, i)
    return j + 1


def _insert(data: bytes, at: float, n: int, payload: bytes) -> bytes:
    i = _at(data, at)
    return data[:i] + payload + data[i:]


def _delete(data: bytes, at: float, n: int, payload: bytes) -> bytes:
    i = _at(data, at)
    return data[:i] + data[i + n :]


def _duplicate(data: bytes, at: float, n: int, payload: bytes) -> bytes:
    i = _at(data, at)
    return data[: i + n] + data[i:]


def _flip(data: bytes, at: float, n: int, payload: bytes) -> bytes:
    if not data:
        return bytes([n % 256])
    i = min(_at(data, at), len(data) - 1)
    return data[:i] + bytes([data[i] ^ (n % 255 + 1)]) + data[i + 1 :]


def _truncate(data: bytes, at: float, n: int, payload: bytes) -> bytes:
    return data[: _at(data, at)]


def _deep_flow(data: bytes, at: float, n: int, payload: bytes) -> bytes:
    depth = n * 37 % 5000 + 1
    opener = b"{a: " if n % 2 else b"["
    closer = b"}" if n % 2 else b"]"
    nest = opener * depth + (closer * depth if n % 3 else b"")
    i = _line_start(data, at)
    return data[:i] + b"x: " + nest + b"\n" + data[i:]


def _deep_block(data: bytes, at: float, n: int, payload: bytes) -> bytes:
    depth = n * 13 % 600 + 1
    step = 1 + n % 3
    item = n % 2 == 0
    lines = [b" " * (step * d) + (b"- " if item and d % 2 else b"") + b"k%d:" % d for d in range(depth)]
    i = _line_start(data, at)
    return data[:i] + b"\n".join(lines) + b" v\n" + data[i:]


def _wide(data: bytes, at: float, n: int, payload: bytes) -> bytes:
    width = n * 97 % 5_000 + 1
    if n % 2:
        block = b"tags: [" + b", ".join(b"t%d" % k for k in range(width)) + b"]\n"
    else:
        block = b"".join(b"k%d: v%d\n" % (k, k) for k in range(width))
    i = _line_start(data, at)
    return data[:i] + block + data[i:]


def _huge_line(data: bytes, at: float, n: int, payload: bytes) -> bytes:
    unit = payload or b"a"
    line = (unit * (n * 1009 % 600_000 // len(unit) + 1))[:600_000]
    i = _line_start(data, at)
    return data[:i] + b"title: " + line + b"\n" + data[i:]


def _line_endings(data: bytes, at: float, n: int, payload: bytes) -> bytes:
    return data.replace(b"\n", (b"\r\n", b"\r", b"\n\r", b"\r\r\n")[n % 4])


def _bom(data: bytes, at: float, n: int, payload: bytes) -> bytes:
    bom = "\ufeff".encode() if n % 2 else b"\xfe\xff"
    return bom + data if n % 3 else _insert(data, at, n, bom)


def _bad_utf8(data: bytes, at: float, n: int, payload: bytes) -> bytes:
    return _insert(data, at, n, _BAD_UTF8[n % len(_BAD_UTF8)])


def _controls(data: bytes, at: float, n: int, payload: bytes) -> bytes:
    return _insert(data, at, n, _CONTROLS[n % len(_CONTROLS)].encode("utf-8", "surrogatepass") * (n % 4 + 1))


def _yaml_bits(data: bytes, at: float, n: int, payload: bytes) -> bytes:
    return _insert(data, at, n, _YAML_BITS[n % len(_YAML_BITS)])


def _swap_lines(data: bytes, at: float, n: int, payload: bytes) -> bytes:
    lines = data.split(b"\n")
    if len(lines) < 2:
        return data
    i = _at(data, at) * len(lines) // max(1, len(data))
    i = min(i, len(lines) - 1)
    j = n % len(lines)
    lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def _tabs(data: bytes, at: float, n: int, payload: bytes) -> bytes:
    return data.replace(b"\n  ", b"\n\t", n % 5 + 1)


def _markers(data: bytes, at: float, n: int, payload: bytes) -> bytes:
    return _insert(
        data, _line_start(data, at) / max(1, len(data)), n, (b"---\n", b"...\n", b"+++\n", b"--- x\n")[n % 4]
    )


def _token(data: bytes, at: float, n: int, payload: bytes) -> bytes:
    depth = n * 31 % 3000 + 1
    header = b'{"alg": ' + b"[" * depth + b"]" * depth + b"}"
    seg = base64.urlsafe_b64encode(header).rstrip(b"=")
    return _insert(data, at, n, b" eyJ" + seg[3:] + b".eyJzdWIiOiIxIn0.c2lnbmF0dXJlc2ln ")


MUTATIONS = {
    "insert": _insert,
    "delete": _delete,
    "duplicate": _duplicate,
    "flip": _flip,
    "truncate": _truncate,
    "deep_flow": _deep_flow,
    "deep_block": _deep_block,
    "wide": _wide,
    "huge_line": _huge_line,
    "line_endings": _line_endings,
    "bom": _bom,
    "bad_utf8": _bad_utf8,
    "controls": _controls,
    "yaml_bits": _yaml_bits,
    "swap_lines": _swap_lines,
    "tabs": _tabs,
    "markers": _markers,
    "token": _token,
}
#: The cheap kinds (small outputs), drawn far more often than the expensive ones in the fuzz script.
EXPENSIVE = frozenset({"wide", "huge_line", "deep_flow", "deep_block", "token"})


def mutate(data: bytes, steps: list[tuple[str, float, int, bytes]]) -> bytes:
    """Apply ``steps`` (``(kind, position in [0, 1], n, payload)``) to ``data`` in order."""
    for kind, at, n, payload in steps:
        data = MUTATIONS[kind](data, at, n, payload)
    return data
