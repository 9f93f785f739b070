"""How an agent's words become a search: the three query modes of ``search_memory`` and the relevance rule that
``search_memory`` and ``build_context_pack`` share.

- ``natural`` (the default, for questions such as "how should private memory be retained?"): the words are
  case-folded, stop words and one-letter words dropped, common English endings trimmed ("retained" → "retain",
  matched as a prefix), and a record matches when it holds ANY remaining term, ranked by BM25 (title weighted
  10:1, as the index is) with a boost for terms among its tags.
- ``all_words``: every word must match (as a prefix), as ``memzoi search`` does.
- ``phrase``: the words in this order.

The **relevance floor** (:func:`relevant`): a hit must hold at least half of the query's terms, and at least
:data:`FLOOR` of them weighted by their BM25 inverse document frequency (a rare term weighs more, a term no memory
holds weighs most), so "write a haiku" over a project whose records never mention haikus returns nothing although
some mention writing, while "how big may a source file get?" still finds the record about source files. :func:`score` maps a hit to 0–1 (higher is better):
half its weighted coverage, half its BM25 strength saturated (``s / (s + 5)`` of ``-bm25``), plus a tag bonus.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping

MODES = ("natural", "all_words", "phrase")
#: A hit must cover at least this share of the query's IDF-weighted terms (natural mode), and half of its terms.
FLOOR = 0.4
_WORD = re.compile(r"\w+", flags=re.UNICODE)
#: English function words and question words that carry no topic (a short, fixed list: recall must stay
#: predictable; a word that is also a topic, such as "state" or "use", is not in it).
STOP_WORDS = frozenset(
    """
a about above after again against all also am an and any are as at be because been before being below between
both but by can could did do does doing done down during each either else ever every few for from further get gets
got had has have having he her here hers herself him himself his how however i if in into is it its itself just
let like may me might mine more most must my myself need no nor not now of off on once only or other our ours
ourselves out over own please same shall she should so some such than that the their theirs them themselves then
there these they this those through to too under until up upon us very via was we were what whatever when where
whether which while who whom whose why will with within without would yes yet you your yours yourself yourselves
tell know show find give make want wanted way ways thing things anything something everything really
""".split()
)
_ENDINGS = ("ingly", "ings", "ing", "edly", "ed", "es", "s")


def stem(word: str) -> str:
    """``word`` (case-folded) with one common English ending removed, kept at least four letters long
    ("retained" → "retain", "records" → "record"); matched as a prefix, so "retain" finds "retains" too."""
    for end in _ENDINGS:
        if word.endswith(end) and len(word) - len(end) >= 4:
            return word[: -len(end)]
    return word


def terms(text: str) -> list[str]:
    """The search terms of ``text`` in natural mode: words case-folded, stop words and one-letter words dropped,
    each stemmed (:func:`stem`), without repeats, at most 32. A text made only of stop words keeps its words
    (stemmed), so "how to" still searches for something."""
    words = [w.casefold() for w in _WORD.findall(text)]
    kept = [w for w in words if w not in STOP_WORDS and len(w) > 1] or [w for w in words if len(w) > 1]
    out: list[str] = []
    for w in kept:
        s = stem(w)
        if s not in out:
            out.append(s)
    return out[:32]


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def fts_match(text: str, mode: str) -> str | None:
    """The FTS5 ``MATCH`` expression for ``text`` in ``mode`` (:data:`MODES`); ``None`` when it has no words.
    Input syntax is never interpreted: every word is quoted."""
    if mode == "phrase":
        words = _WORD.findall(text)[:32]
        return _quoted(" ".join(words)) if words else None
    found = terms(text) if mode == "natural" else [w.casefold() for w in _WORD.findall(text)[:32]]
    if not found:
        return None
    return (" OR " if mode == "natural" else " ").join(_quoted(t) + "*" for t in found)


def idf(df: int, total: int) -> float:
    """BM25's inverse document frequency of a term found in ``df`` of ``total`` documents (always > 0)."""
    return math.log((total - df + 0.5) / (df + 0.5) + 1.0)


_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\W\d_A-Za-z]+", flags=re.UNICODE)


def words_of(text: str) -> set[str]:
    """The case-folded words of ``text``, and the parts of compound words (``TokenMutex`` → ``token``, ``mutex``;
    ``snake_case`` → ``snake``, ``case``): code names are how memories name things."""
    out = set()
    for w in _WORD.findall(text):
        out.add(w.casefold())
        parts = _PART.findall(w)
        if len(parts) > 1:
            out.update(p.casefold() for p in parts)
    return out


def matched(query_terms: Iterable[str], text: str) -> set[str]:
    """The terms of ``query_terms`` that begin a word of ``text`` or a part of a compound word (:func:`words_of`),
    case-folded, as the index matches a prefix."""
    words = words_of(text)
    return {t for t in query_terms if any(w.startswith(t) for w in words)}


def candidates_match(text: str, mode: str) -> str | None:
    """The FTS5 expression that finds the candidates of a ``mode`` query: any term for ``natural`` and
    ``all_words`` (a record whose compound word holds a term is found through another term, then every term is
    checked with :func:`matched`), the phrase for ``phrase``."""
    return fts_match(text, mode) if mode != "all_words" else _any_words(text)


def _any_words(text: str) -> str | None:
    found = [w.casefold() for w in _WORD.findall(text)[:32]]
    return " OR ".join(_quoted(t) + "*" for t in found) if found else None


def coverage(query_terms: list[str], hit: set[str], weights: Mapping[str, float]) -> float:
    """The IDF-weighted share (0–1) of ``query_terms`` among the ``hit`` terms."""
    total = sum(weights.get(t, 1.0) for t in query_terms)
    return sum(weights.get(t, 1.0) for t in query_terms if t in hit) / total if total else 0.0


def relevant(query_terms: list[str], hit: set[str], weights: Mapping[str, float]) -> float | None:
    """The hit's weighted coverage (:func:`coverage`) when it passes the relevance floor (see the module
    docstring), else ``None``."""
    if not query_terms or 2 * sum(1 for t in query_terms if t in hit) < len(query_terms):
        return None
    cover = coverage(query_terms, hit, weights)
    return cover if cover >= FLOOR else None


def score(bm25: float, cover: float, tag_hits: int = 0) -> float:
    """A hit's score, 0–1, higher is better (see the module docstring); ``bm25`` as SQLite gives it (lower is
    better, usually negative)."""
    strength = max(0.0, -bm25)
    return round(min(1.0, 0.5 * cover + 0.5 * strength / (strength + 5.0) + 0.1 * min(tag_hits, 2)), 4)
