"""The shape of the core, read from the source with ``ast`` (nothing is imported).

* no import cycle between the modules of ``lsp_server`` (the core ``memzoi``, the servers ``memzoi_lsp`` and
  ``memzoi_mcp``). Every import counts: one inside a function or under ``if TYPE_CHECKING`` (a lazy import only
  hides a cycle), and the parent packages an import runs (importing ``a.b.c`` runs ``a/b/__init__``, so it is an
  edge to ``a.b`` as well, unless the importer is inside ``a.b`` already);
* no server module imports ``memzoi_lsp.server`` (the composition root): a feature receives a view of the session
  (``memzoi_lsp.session``), never the whole ``Session``; each view holds exactly the members its feature uses, and
  each member is declared by one protocol (:mod:`tests.session_uses` reads both with ``ast``);
* no feature module of ``memzoi_lsp`` (:data:`FEATURES`) imports another: what one feature asks of another goes
  through the session (the composition root delegates), and what several share lives in a module that is no
  feature (:data:`SHARED`); every ``memzoi_lsp`` module is one or the other, or the composition root;
* the core never imports pygls, lsprotocol or mcp, nor the server packages that use them;
* ``memzoi_lsp`` never imports the command line (``memzoi.cli``): what the server shares with the CLI is core;
* the accelerator ``memzoi.read.yaml_fast`` is imported by the YAML reader (``memzoi.read.yaml12``) only;
* the core is layered (:data:`LAYERS`): every module lives in a layer subpackage, a module imports only its own
  layer and the layers below it, and each layer package's docstring says what it may import;
* no core or server module is longer than :data:`MAX_LINES` physical lines (:func:`length`: what ``wc -l`` prints,
  as ``ruff format`` leaves the file);
* no function of ``memzoi_lsp`` or ``memzoi_mcp`` has a cyclomatic complexity of :data:`MAX_COMPLEXITY` or more
  (a decision there belongs to the core).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from . import session_uses

SRC = Path(__file__).resolve().parents[1] / "lsp_server"
CORE = SRC / "memzoi"
MAX_LINES = 400
#: Core modules allowed past MAX_LINES, each with the reason a split would be artificial. Empty: keep it so.
LONG_MODULES: dict[str, str] = {}
FORBIDDEN = ("pygls", "lsprotocol", "mcp", "memzoi_lsp", "memzoi_mcp")

#: The core's layers, lowest first; the subpackages of one tuple are one layer (they may import each other). A module
#: imports only modules of its own layer and of the layers below (``docs/architecture.md``, "Layers").
LAYERS: tuple[tuple[str, ...], ...] = (
    ("base",),
    ("read",),
    ("judge", "models", "safety"),
    ("ledger",),
    ("project", "resident"),
    ("stores",),
    ("runs",),
    ("lifecycle",),
    ("agent",),
    ("cli",),
)
RANK = {package: rank for rank, layer in enumerate(LAYERS) for package in layer}
#: The only core modules outside a layer: the package itself and ``python -m memzoi``.
TOP_LEVEL = {"memzoi", "memzoi.__main__"}
#: Flat core modules and the layer each moves to (``memzoi.<module>`` becomes ``memzoi.<layer>.<module>``). The
#: one-time layout move (git mv of every module listed, imports rewritten) empties this table.
PENDING_MOVE: dict[str, str] = {}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(package: Path) -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(package.rglob("*.py"))}


def _imports(name: str, path: Path, known: set[str]) -> list[tuple[str, int]]:
    """Absolute names of the modules that ``path`` (module ``name``) imports, with their lines. ``from X import
    y`` names ``X.y`` when that is a module of ``known``, else ``X``."""
    is_package = path.name == "__init__.py"
    out: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.append((sub if sub in known else target, node.lineno))
    return out


def _edges(name: str, target: str, known: set[str]) -> set[str]:
    """The modules of ``known`` that importing ``target`` from module ``name`` runs: ``target`` and the packages
    above it, except ``name`` itself and the packages ``name`` is in (they are being imported already)."""
    parts = target.split(".")
    own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}
    return {t for t in (".".join(parts[:i]) for i in range(1, len(parts) + 1)) if t in known and t not in own}


def _graph(*packages: str) -> dict[str, set[str]]:
    """The import graph of ``packages`` (default: the core only), every import counted (see the module
    docstring)."""
    mods = {m: p for pkg in (packages or ("memzoi",)) for m, p in _modules(SRC / pkg).items()}
    known = set(mods)
    return {m: {e for t, _ in _imports(m, p, known) for e in _edges(m, t, known)} for m, p in mods.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_relative_imports_resolve_to_modules(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    init = pkg / "sub" / "__init__.py"
    init.write_text("from . import leaf\nfrom ..top import thing\nfrom .leaf import f\n")
    known = {"pkg", "pkg.top", "pkg.sub", "pkg.sub.leaf"}
    assert [t for t, _ in _imports("pkg.sub", init, known)] == ["pkg.sub.leaf", "pkg.top", "pkg.sub.leaf"]


def test_parent_packages_are_edges():
    known = {"pkg", "pkg.sub", "pkg.sub.leaf", "pkg.top"}
    assert _edges("pkg.top", "pkg.sub.leaf", known) == {"pkg.sub", "pkg.sub.leaf"}
    assert _edges("pkg.sub.leaf", "pkg.sub", known) == set()  # its own package is being imported already
    assert _edges("pkg.sub", "pkg.top", known) == {"pkg.top"}


def test_hidden_imports_make_cycles(tmp_path, monkeypatch):
    """A cycle closed by a function-local import, a ``TYPE_CHECKING`` import or a parent package's
    ``__init__`` is found."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .inner import thing\n")
    (pkg / "sub" / "inner.py").write_text("def thing():\n    from ..lazy import f\n")
    (pkg / "sub" / "other.py").write_text("")
    (pkg / "lazy.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .typed import T\n")
    (pkg / "typed.py").write_text("from .sub.other import x\n")  # runs pkg/sub/__init__ first
    monkeypatch.setattr(sys.modules[__name__], "SRC", tmp_path)
    assert _cycles(_graph("pkg")) == [["pkg.lazy", "pkg.sub", "pkg.sub.inner", "pkg.typed"]]
    (pkg / "typed.py").write_text("")
    assert _cycles(_graph("pkg")) == []


def test_the_core_has_no_import_cycle():
    graph = _graph()
    assert len(graph) > 50 and "memzoi.stores.index" in graph["memzoi.runs.check"]
    assert _cycles(graph) == []


def test_the_servers_have_no_import_cycle():
    graph = _graph("memzoi", "memzoi_lsp", "memzoi_mcp")
    assert len([m for m in graph if m.startswith("memzoi_lsp.")]) > 30 and "memzoi_mcp.server" in graph
    assert "memzoi_lsp.resident" in graph["memzoi_lsp.server"]
    assert _cycles(graph) == []


def test_no_feature_imports_the_composition_root():
    graph = _graph("memzoi", "memzoi_lsp", "memzoi_mcp")
    assert sorted(m for m, targets in graph.items() if "memzoi_lsp.server" in targets) == ["memzoi_lsp.__main__"]


#: The server's features (docs/architecture.md, "Features over snapshots"): each receives the session and imports
#: no other feature.
FEATURES = frozenset(
    "actions checkpoints commands diagnostics folders hover inbox inboxwatch lenses lifecycle localmem "
    "materialization navigation preview resident resident_state routing scan sync watch".split()
)
#: What features share (helpers and the session's types); none imports a feature.
SHARED = frozenset(
    "__init__ changes closed codeactions commandids commanding convert documents indexing inputs keys logbridge "
    "markup notifications project protocol provenance readiness reads refusal resident_view routing_view session "
    "session_members settings tasks textdoc transport clientinput output diagwire publishlog scanjobs diskview".split()
)
#: The composition root: it imports the features and wires them.
ROOT = frozenset({"__main__", "server", "startup"})


def test_every_server_module_is_a_feature_shared_or_the_root():
    names = {m.split(".", 1)[1] if "." in m else "__init__" for m in _modules(SRC / "memzoi_lsp")}
    assert names == FEATURES | SHARED | ROOT, "place the new module in FEATURES, SHARED or ROOT"
    assert not (FEATURES & SHARED or FEATURES & ROOT or SHARED & ROOT)


def _feature_edges(graph: dict[str, set[str]], sources: frozenset[str]) -> list[str]:
    return sorted(
        f"{m} -> {t}"
        for m, targets in graph.items()
        if m.startswith("memzoi_lsp.") and m.split(".", 1)[1] in sources
        for t in targets
        if t.startswith("memzoi_lsp.") and t.split(".", 1)[1] in FEATURES and t != m
    )


def test_no_feature_imports_another_feature():
    graph = _graph("memzoi", "memzoi_lsp")
    assert "memzoi_lsp.diagnostics" in graph["memzoi_lsp.server"]  # the root does
    assert _feature_edges(graph, FEATURES) == []


def test_shared_modules_import_no_feature():
    assert _feature_edges(_graph("memzoi", "memzoi_lsp"), SHARED) == []


def _full_session_users(sources: frozenset[str]) -> list[str]:
    """The ``memzoi_lsp`` modules of ``sources`` that import the full ``session.Session`` (anywhere, type-only
    imports included)."""
    out = []
    for name in sorted(sources - {"session"}):
        tree = ast.parse((SRC / "memzoi_lsp" / f"{name}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "session" and node.level == 1:
                if any(alias.name == "Session" for alias in node.names):
                    out.append(name)
    return out


def test_features_and_shared_modules_receive_a_narrow_session():
    """Only the composition root sees the whole session: each feature and shared module is typed with the narrow
    protocol it needs (``ReadSession``, ``WatchSession``, ``CommandSession`` ...), so mypy refuses a write it
    should not make (docs/architecture.md, "Features over snapshots")."""
    assert _full_session_users(ROOT) == ["startup"]  # the check sees an import of it
    assert _full_session_users(FEATURES | SHARED) == []


#: Members two protocols declare, each with its reason (every other member is declared once): the document cache
#: narrows the read view's ``docs``; the composition root's ``Session`` makes the state it sets settable.
REDECLARED = {
    "docs": ["DocumentsView", "DocumentCache"],
    "loop": ["EventLoop", "Session"],
    "pull_diagnostics": ["PullMode", "Session"],
    "stopping": ["Stopping", "Session"],
}


def test_each_session_member_is_declared_once():
    """The session protocols are a hierarchy: ``session_members`` declares each member once, ``session`` composes
    the views by inheritance (docs/architecture.md, "Features over snapshots")."""
    usage = session_uses.read(SRC / "memzoi_lsp")
    assert len(usage.found.own) > 30 and usage.found.members("Session") >= usage.found.members("ScanSession")
    assert session_uses.repeated(usage.found) == REDECLARED


def test_each_feature_receives_only_the_members_it_uses():
    """Every feature object (and every command feature's handlers) receives a view holding exactly the members it
    uses, itself or through what it passes the session to: a member it never uses fails, naming it."""
    usage = session_uses.read(SRC / "memzoi_lsp")
    objects = {m: usage.feature_objects(m) for m in sorted(FEATURES | SHARED)}
    assert objects["watch"]["FileWatching"][0] == "WatchSession" and objects["scan"]["Scanning"][0] == "ScanSession"
    assert session_uses.unused(usage, sorted(FEATURES | SHARED), sorted(FEATURES)) == []
    assert usage.escapes == []  # every session passed on was followed


PLANTED_MEMBERS = """
class Loop(Protocol):
    @property
    def loop(self) -> Any: ...

class Publisher(Protocol):
    def publish(self, uri: str) -> None: ...

class Clearer(Protocol):
    def clear(self, uri: str) -> None: ...
    def publish(self, uri: str) -> None: ...

class WatchView(Loop, Publisher, Protocol):
    def forget(self, uri: str) -> None: ...
"""
PLANTED_FEATURE = """
from .helpers import flush

class Watching:
    def __init__(self, ls: WatchView) -> None:
        self._ls = ls

    def register(self, server: WatchView) -> None:
        pass

    def changed(self, uri: str) -> None:
        ls = self._ls
        _show(ls, uri)
        flush(self._ls)

def _show(ls, uri):
    ls.publish(uri)
"""


def test_the_member_check_sees_an_unused_member():
    found = session_uses.protocols(PLANTED_MEMBERS)
    assert session_uses.repeated(found) == {"publish": ["Publisher", "Clearer"]}
    helpers = "def flush(ls: Loop) -> None:\n    ls.loop.stop()\n"
    usage = session_uses.Usage.of(found, {"watch": PLANTED_FEATURE, "helpers": helpers})
    # `publish` through its own module's `_show`, `loop` through `helpers.flush`'s type; `forget` never
    assert session_uses.unused(usage, ["watch"]) == ["watch.Watching: WatchView never uses forget"]
    used = PLANTED_FEATURE.replace("        flush(self._ls)", "        flush(self._ls)\n        self._ls.forget(uri)")
    assert session_uses.unused(session_uses.Usage.of(found, {"watch": used, "helpers": helpers}), ["watch"]) == []
    lost = PLANTED_FEATURE.replace("        flush(self._ls)", "        store(self._ls)")
    lost_usage = session_uses.Usage.of(found, {"watch": lost, "helpers": helpers})
    assert session_uses.unused(lost_usage, ["watch"]) == [] and lost_usage.escapes == ["watch.Watching.changed: store"]


def test_the_feature_check_sees_a_feature_import():
    graph = {"memzoi_lsp.hover": {"memzoi_lsp.resident", "memzoi_lsp.documents"}, "memzoi_lsp.resident": set()}
    assert _feature_edges(graph, FEATURES) == ["memzoi_lsp.hover -> memzoi_lsp.resident"]


@pytest.mark.parametrize(
    ("a", "b"), [("memzoi.project.crossfile", "memzoi.stores.index"), ("memzoi.read.yaml12", "memzoi.read.yaml_fast")]
)
def test_former_cycles_stay_one_way(a, b):
    graph = _graph()
    assert a not in graph[b]


def test_the_fast_yaml_path_is_private_to_the_reader():
    graph = _graph()
    assert sorted(m for m, targets in graph.items() if "memzoi.read.yaml_fast" in targets) == ["memzoi.read.yaml12"]


def test_the_core_imports_no_protocol_or_server_package():
    mods = _modules(CORE)
    bad = [
        f"{p.relative_to(SRC)}:{line}: {t}"
        for m, p in mods.items()
        for t, line in _imports(m, p, set(mods))
        if t.split(".")[0] in FORBIDDEN
    ]
    assert bad == []


def test_the_language_server_never_imports_the_command_line():
    mods = _modules(SRC / "memzoi_lsp")
    known = set(mods) | set(_modules(CORE))
    bad = [
        f"{p.relative_to(SRC)}:{line}: {t}"
        for m, p in mods.items()
        for t, line in _imports(m, p, known)
        if t == "memzoi.cli" or t.startswith("memzoi.cli.")
    ]
    assert bad == []


def length(text: str) -> int:
    """Physical lines of ``text`` (what ``wc -l`` prints for a file ending in a newline): code, comments, docstrings,
    blank lines and the continuation lines of a wrapped call all count, since the formatted file is what is read."""
    return len(text.splitlines())


def test_length_counts_physical_lines():
    assert length("x = f(a, b)\n") == 1
    assert length("x = f(\n    a,\n    b,\n)\n") == 4
    assert length('"""Doc\n\nmore."""\n\n# c\ny = [\n  1]\n') == 7


def test_core_modules_are_short():
    long = {
        str(p.relative_to(CORE)): n
        for p in sorted(CORE.rglob("*.py"))
        if (n := length(p.read_text(encoding="utf-8"))) > MAX_LINES
    }
    assert {k: v for k, v in long.items() if k not in LONG_MODULES} == {}
    assert set(LONG_MODULES) <= set(long), "a module of the allow-list is short now: take it off the list"


SERVERS = ("memzoi_lsp", "memzoi_mcp")


def test_server_modules_are_short():
    long = {
        str(p.relative_to(SRC)): n
        for pkg in SERVERS
        for p in sorted((SRC / pkg).rglob("*.py"))
        if (n := length(p.read_text(encoding="utf-8"))) > MAX_LINES
    }
    assert long == {}


#: The server only converts and wires: a function that branches this much holds a decision that belongs to the core.
MAX_COMPLEXITY = 15
_BRANCHES = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.IfExp, ast.ExceptHandler, ast.Assert, ast.match_case)


def complexity(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """McCabe's cyclomatic complexity of ``fn``'s own body (nested functions and classes count on their own):
    1 + branches + extra boolean operands + comprehension loops and their conditions."""
    n, stack = 1, list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, _BRANCHES):
            n += 1
        elif isinstance(node, ast.BoolOp):
            n += len(node.values) - 1
        elif isinstance(node, ast.comprehension):
            n += 1 + len(node.ifs)
        stack.extend(ast.iter_child_nodes(node))
    return n


def test_complexity_counts_branches_of_the_own_body():
    src = (
        "def f(a, b):\n    if a and b:\n        return [x for x in a if x]\n    for y in b:\n        pass\n"
        "    def inner():\n        if a: pass\n    return 1 if a else 2\n"
    )
    fn = ast.parse(src).body[0]
    assert complexity(fn) == 1 + 1 + 1 + 2 + 1 + 1  # if, and, comprehension + its if, for, if-expression


def test_server_functions_only_convert_and_wire():
    heavy = [
        f"{p.relative_to(SRC)}:{node.lineno} {node.name} ({c})"
        for pkg in SERVERS
        for p in sorted((SRC / pkg).rglob("*.py"))
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (c := complexity(node)) >= MAX_COMPLEXITY
    ]
    assert heavy == []


def _layer(module: str) -> str | None:
    """The layer subpackage of a core module (``memzoi.read.text`` → ``read``), or None outside any layer."""
    parts = module.split(".")
    if len(parts) < 2:
        return None
    return parts[1] if parts[1] in RANK else PENDING_MOVE.get(parts[1]) if len(parts) == 2 else None


def test_layer_lookup():
    assert _layer("memzoi.ledger.view") == "ledger" and _layer("memzoi.ledger") == "ledger"
    assert _layer("memzoi") is None and _layer("memzoi.__main__") is None and _layer("memzoi.nowhere") is None


def test_every_core_module_is_in_a_layer():
    assert sorted(m for m in _graph() if _layer(m) is None and m not in TOP_LEVEL) == []


def _upward(graph: dict[str, set[str]]) -> list[str]:
    return [
        f"{a} ({_layer(a)}) imports {b} ({_layer(b)})"
        for a in sorted(graph)
        for b in sorted(graph[a])
        if _layer(a) in RANK and _layer(b) in RANK and RANK[_layer(a)] < RANK[_layer(b)]
    ]


def test_the_upward_finder_finds_an_upward_import():
    assert _upward({"memzoi.ledger.view": {"memzoi.cli.main", "memzoi.safety.scan"}}) == [
        "memzoi.ledger.view (ledger) imports memzoi.cli.main (cli)"
    ]


def test_layers_import_only_downward():
    """Function-local imports count: a lazy import is still a dependency."""
    assert _upward(_graph()) == []


def test_layer_packages_say_what_they_may_import():
    """Each existing layer package's docstring has a line ``May import: a, b, c.`` naming exactly its own layer and
    the layers below."""
    wrong = {}
    for rank, layer in enumerate(LAYERS):
        allowed = sorted(p for lower in LAYERS[: rank + 1] for p in lower)
        for package in layer:
            init = CORE / package / "__init__.py"
            if not init.exists():
                assert package in PENDING_MOVE.values(), f"layer {package} has no package"
                continue
            doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
            said = [
                line.removeprefix("May import:").strip().rstrip(".")
                for line in doc.splitlines()
                if line.startswith("May import:")
            ]
            if [sorted(x.strip() for x in s.split(",")) for s in said] != [allowed]:
                wrong[package] = said
    assert wrong == {}


#: Why a function-local import is deliberate (CONTRIBUTING.md, "Lazy imports are marked").
LAZY_REASONS = ("start-up", "platform", "cycle")


def _lazy_marks(text: str) -> list[tuple[int, str]]:
    """``(line, reason)`` of every ``# noqa: PLC0415`` mark of ``text``; the reason is what follows ``lazy:`` (empty
    when it is missing)."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if "PLC0415" in line:
            after = line.split("PLC0415", 1)[1].strip()
            words = after.removeprefix("lazy:").split() if after.startswith("lazy:") else []
            out.append((n, words[0] if words else ""))
    return out


def test_lazy_mark_reader():
    text = "def f():\n    import a  # noqa: PLC0415 lazy: start-up (why)\n    import b  # noqa: PLC0415\n"
    assert _lazy_marks(text) == [(2, "start-up"), (3, "")]


def test_every_lazy_import_mark_says_why():
    bad = [
        f"{p.relative_to(SRC)}:{n}: {reason!r}"
        for p in sorted(SRC.rglob("*.py"))
        if "egg-info" not in str(p)
        for n, reason in _lazy_marks(p.read_text(encoding="utf-8"))
        if reason not in LAZY_REASONS
    ]
    assert bad == []
