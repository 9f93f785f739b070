"""The fast path of the frontmatter parser agrees with the full parser wherever it answers."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from memzoi.read import yaml12
from memzoi.read.yaml12 import PlainScalar, YAlias, YMap, YScalar, YSeq
from memzoi.read.yaml_fast import fast_load

from .conftest import CORPUS, corpus_or_skip


def shape(node):
    """Structure, values and scalar/key spans (container end offsets are not part of the contract)."""
    if isinstance(node, YScalar):
        v = node.value
        kind = ("plain", v.resolved) if isinstance(v, PlainScalar) else type(v).__name__
        return ("S", v if v is None else str(v), kind, node.start, node.end, node.style)
    if isinstance(node, YSeq):
        return ("Q", node.flow, [shape(i) for i in node.items])
    if isinstance(node, YMap):
        return (
            "M",
            node.flow,
            [(k.start, k.end, str(k.value), shape(node.entries[str(k.value)][1])) for k in node.order],
        )
    if isinstance(node, YAlias):
        return ("A",)
    return None


def full(text: str):
    res = yaml12._parse(text, 0, text, lambda o: (0, 0))
    if not isinstance(res, yaml12.YamlResult) or res.findings:
        return None
    return res.root


def agree(text: str) -> bool:
    """True when the fast path answered; asserts it matches the full parser."""
    node = fast_load(text, 0, len(text))
    if node is None:
        return False
    ref = full(text)
    assert ref is not None, f"fast path accepted text the full parser rejects: {text!r}"
    assert shape(node) == shape(ref), text
    return True


def test_corpus_frontmatter_takes_the_fast_path():
    corpus_or_skip()
    from memzoi.read.document import frame

    taken = 0
    files = sorted(CORPUS.rglob("*.md"))
    for path in files:
        doc = frame(path.read_text(encoding="utf-8"))
        if doc.fm_start is None or doc.fm_end is None:
            continue
        taken += agree(doc.text[doc.fm_start : doc.fm_end])
    assert taken >= 40  # every current record, legacy record and example packet


EXAMPLES = [
    "a: 1\nb: 2.5\nc: true\nd: ~\ne:\nf: 0x1F\ng: no\nh: 2026-07-04T00:00:00Z\n",
    'title: "Rust MSRV is 1.96.1+"\ndescription: "x \\"y\\" \\u00e9 \\\\ z"\n',
    "t: 'it''s'\nu: 'a b'\n",
    "retention: {}\norigin:\n  origin_key: repository-record:x\n  route: repository_materialization\n",
    'tags: [a, b, "c d"]\nempty: []\nx: [ a ,b ]\n',
    "scope:\n  kind: project\n  paths:\n    - src/auth/**\nsources:\n  - path: src/a.ts\n  - url: https://x.invalid/a?b=c\n    ref: abc\n",
    "list:\n- a\n- b\nnext: 1\n",
    "a: 1\r\nb:\r\n  c: 2\r\n",
    "# comment\na: 1\n  # indented comment\nb: 2\n",
    "k: v   \nk2: v2\t\n",
    "a: b c d\nwin: C:\\tmp\\x\nurl: http://x:80/p\n",
    "é: 1\n",
    "a: 1\na: 2\n",
    "a: |\n  block\n",
    "a: foo\n  continued\n",
    "a: *x\n",
    "a: &x 1\n",
    "a: [a, [b]]\n",
    "a: {b: 1}\n",
    "- a\n- b\n",
    "a: -1\nb: -x\nc: - x\n",
    "a:\n  - b: 1\n    c: 2\n  - d\n",
    "a: 'x\n",
    'a: "\\/"\n',
    "true: 1\n",
    "a: x # c\n",
    "a: @x\n",
    "a: %x\n",
    "a: `x`\n",
    "a: >x\n",
    "a: ?x\n",
    "? a\n: b\n",
    'a: "\\x41"\n',
    "a: \x85x\n",
    "a: x\u2028y\n",
    "a: [a,]\n",
    "a: [,a]\n",
    "a: [a b, c]\n",
    'a: ["a" ,b]\n',
    "a: []x\n",
    "a:\n\n  b: 1\n",
]


def test_examples_agree():
    answered = sum(agree(t) for t in EXAMPLES)
    assert answered >= 12


atoms = st.sampled_from(
    [
        "a",
        "b",
        "1",
        "0.5",
        "true",
        "~",
        "no",
        "x y",
        "C:\\x",
        "http://h:1/p",
        "-1",
        "é",
        "😀",
        "a:b",
        "a: b",
        '"q"',
        '"a\\"b"',
        "'s'",
        "'it''s'",
        "{}",
        "[]",
        "[a, b]",
        "[a,[b]]",
        "",
        "#c",
        "x #c",
        "*a",
        "&a x",
        "|",
        "- x",
        "2026-07-04T00:00:00Z",
        '["a", 1]',
        "x\t",
        "\u00a0x",
        "a\x85b",
    ]
)


@st.composite
def documents(draw, depth=0):
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        indent = "  " * depth
        key = draw(st.sampled_from(["id", "title", "tags", "x-y", "_k", "true", "k"]))
        form = draw(st.integers(0, 3 if depth < 2 else 1))
        if form <= 1:
            lines.append(
                f"{indent}{key}: {draw(atoms)}".rstrip(" ") if draw(st.booleans()) else f"{indent}{key}: {draw(atoms)}"
            )
        elif form == 2:
            lines.append(f"{indent}{key}:")
            lines.append(draw(documents(depth + 1)))
        else:
            lines.append(f"{indent}{key}:")
            for _ in range(draw(st.integers(1, 3))):
                lines.append(f"{indent}{draw(st.sampled_from(['', '  ']))}- {draw(atoms)}")
    return "\n".join(lines)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), st.sampled_from(["\n", "\r\n"]), st.sampled_from(["", "\n", "\r", "\r\n"]))
def test_generated_documents_agree(doc, nl, tail):
    agree(doc.replace("\n", nl) + tail)


plain_atoms = st.sampled_from(
    ["a", "b", "1", "0.5", "true", "~", "no", "x y", "é", '"q"', "2026-07-04T00:00:00Z", "http://h:1/p"]
)


@st.composite
def plain_documents(draw, depth=0):
    """Documents of the shapes the fast path exists for (block maps and lists of plain or simply quoted
    scalars), which it must answer, not decline."""
    lines = []
    for i in range(draw(st.integers(1, 4))):
        indent = "  " * depth
        key = f"k{depth}_{i}"
        form = draw(st.integers(0, 2 if depth < 2 else 0))
        if form == 0:
            lines.append(f"{indent}{key}: {draw(plain_atoms)}")
        elif form == 1:
            lines.append(f"{indent}{key}:")
            lines.append(draw(plain_documents(depth + 1)))
        else:
            lines.append(f"{indent}{key}:")
            lines += [f"{indent}  - {draw(plain_atoms)}" for _ in range(draw(st.integers(1, 3)))]
    return "\n".join(lines)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plain_documents(), st.sampled_from(["\n", "\r\n"]))
def test_the_fast_path_answers_plain_documents_and_agrees(doc, nl):
    """The property above holds only where the fast path answers; here it must answer (a fast path that always
    declined would pass the test above and fail this one)."""
    assert agree(doc.replace("\n", nl) + nl), doc


def test_line_splitting_and_unescaped_strings_agree():
    """Cases of the line splitter (blank, space-only, tab-led and CR-only lines) and of double-quoted strings
    taken without json decoding when they hold no escape."""
    assert agree('title: "plain quoted, no escape"\nd: "with \\\\ escape"\n')
    assert agree("a: 1\n   \n\nb: 2\n")
    assert agree("a: 1\rb:\r  c: x y  \r")
    assert not agree("a: 1\n\tb: 2\n")
    assert not agree("a:\n \tb: 2\n")
    # Repeated spellings are resolved once and shared; results stay per call.
    assert agree("a: yes\nb: 1\nc: null\n") and agree("a: yes\nb: 1\nc: null\n")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), st.sampled_from(["", "\n", "\n\n"]))
def test_both_row_splitters_agree(doc, tail):
    """Line-feed text is split with str.split (cached line shapes), other breaks with one regex match per line:
    both give the same rows, or both refuse."""
    from memzoi.read.yaml_fast import _rows, _rows_any_break

    text = doc + tail
    assert _rows(text, 0, len(text)) == _rows_any_break(text, 0, len(text)), text
    # Offsets stay absolute when the frontmatter starts inside a larger text.
    framed = "---\n" + text + "\n---\n"
    assert _rows(framed, 4, 4 + len(text)) == _rows_any_break(framed, 4, 4 + len(text))


def test_caches_stay_bounded_and_results_stay_exact():
    from memzoi.read import yaml_fast

    for i in range(yaml_fast._CACHE_LIMIT + 10):
        text = f"k{i}: v{i}\nn: {i}\n"
        node = fast_load(text, 0, len(text))
        assert node.entries[f"k{i}"][1].value == f"v{i}" and node.entries["n"][1].value.resolved == i
    assert max(len(yaml_fast._keys), len(yaml_fast._plains), len(yaml_fast._shapes)) <= yaml_fast._CACHE_LIMIT
    assert agree("a: yes\nb: 1\nc: null\n")


def test_long_lines_are_parsed_but_not_cached():
    from memzoi.read import yaml_fast

    long_value = "w" * (yaml_fast._CACHED_TEXT_MAX + 1)
    text = f'a: {long_value}\nb: "{long_value}"\n'
    assert agree(text)
    assert f"a: {long_value}" not in yaml_fast._shapes and long_value not in yaml_fast._plains
    node = fast_load(text, 0, len(text))
    assert node.entries["a"][1].value == long_value and node.entries["b"][1].style == '"'


def test_the_negated_character_classes_equal_the_written_ones_on_every_code_point():
    """The fast path's classes are compiled as negations (:func:`memzoi.read.yaml_fast._high`): each accepts exactly
    the code points of ``[ascii + _HIGH]``, over the whole of Unicode (surrogates, U+FFFE/U+FFFF and the line
    breaks libyaml folds included)."""
    import re

    from memzoi.read import yaml_fast

    every = "".join(chr(c) for c in range(0x110000))
    for ascii_class in (
        r"A-Za-z0-9_./~+=^$()<;\\",
        r"\x20-\x22\x24-\x7e",
        r"\x20\x21\x23-\x5b\x5d-\x7e",
        r"\x20-\x26\x28-\x7e",
        r"A-Za-z0-9_./~+=^$()<;\x2d",
        r"\x20\x21\x24-\x26\x28-\x2b\x2d-\x39\x3b-\x5a\x5c\x5e-\x7a\x7c\x7e",
    ):
        written = re.compile(f"[{ascii_class}{yaml_fast._HIGH}]")
        negated = re.compile(yaml_fast._high(ascii_class))
        assert [m.start() for m in negated.finditer(every)] == [m.start() for m in written.finditer(every)]
