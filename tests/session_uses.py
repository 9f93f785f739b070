"""Which members of its session protocol each ``memzoi_lsp`` feature uses, read from the source with ``ast`` (nothing
is imported): the checker behind ``tests/test_architecture.py``'s narrow-session rules (docs/architecture.md,
"Features over snapshots").

* :func:`protocols` reads the session modules (``session_members.py``, ``session.py``): each ``Protocol`` class with
  the members it declares itself and its bases among them.
* :func:`repeated` names the members that more than one protocol declares (a hierarchy declares each member once
  and composes protocols by inheritance).
* :func:`unused` names, for each feature (an object whose ``__init__`` receives a session protocol; in a feature
  module without one, its handlers, module-level functions receiving one), the members of its protocol it never
  uses.

A feature uses a member when it reads it on the session it received (``ls.docs``, ``self._ls.publish(...)``, an
alias ``ls = self._ls``), in any method or nested handler, or when it passes the session on: to a function of its
own module, which counts with the members that function uses; to a function or class of another module, which
counts with every member of the protocol that function's parameter is typed with (what mypy holds the caller to).
A session passed where the call cannot be resolved by name counts as using every member and is listed in
:attr:`Usage.escapes`, so a test can hold that list empty.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
#: Stands for "every member": a session passed where the checker cannot follow it.
ALL = "*"


@dataclass
class Protocols:
    """Protocol classes: ``own[name]`` the members one declares in its body, ``bases[name]`` its bases among them."""

    own: dict[str, list[str]] = field(default_factory=dict)
    bases: dict[str, list[str]] = field(default_factory=dict)

    def members(self, name: str) -> set[str]:
        """Every member of protocol ``name``: its own and its bases'."""
        out = set(self.own[name])
        for base in self.bases[name]:
            out |= self.members(base)
        return out


def protocols(*sources: str) -> Protocols:
    """The ``Protocol`` classes of ``sources`` (module texts) with their members (properties, methods, annotated
    attributes) and bases."""
    out = Protocols()
    for source in sources:
        for node in ast.parse(source).body:
            if not isinstance(node, ast.ClassDef):
                continue
            names = [b.id for b in node.bases if isinstance(b, ast.Name)]
            if "Protocol" not in names:
                continue
            members: list[str] = []
            for item in node.body:
                if isinstance(item, FunctionNode):
                    members.append(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    members.append(item.target.id)
            out.own[node.name] = members
            out.bases[node.name] = [n for n in names if n != "Protocol"]
    return out


def repeated(found: Protocols) -> dict[str, list[str]]:
    """Members declared by more than one protocol of ``found``, each with the protocols declaring it."""
    where: dict[str, list[str]] = {}
    for name, members in found.own.items():
        for member in members:
            where.setdefault(member, []).append(name)
    return {member: names for member, names in sorted(where.items()) if len(names) > 1}


def _annotation(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


@dataclass
class _Module:
    name: str
    functions: dict[str, FunctionNode] = field(default_factory=dict)  # "f" or "Class.method"
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)  # local name -> module (``from . import m``)
    names: dict[str, tuple[str, str]] = field(default_factory=dict)  # local name -> (module, name)

    @classmethod
    def read(cls, name: str, source: str) -> _Module:
        tree = ast.parse(source)
        mod = cls(name)
        for node in tree.body:
            if isinstance(node, FunctionNode):
                mod.functions[node.name] = node
            elif isinstance(node, ast.ClassDef):
                mod.classes[node.name] = node
                for item in node.body:
                    if isinstance(item, FunctionNode):
                        mod.functions[f"{node.name}.{item.name}"] = item
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                for alias in node.names:
                    local = alias.asname or alias.name
                    if node.module is None:
                        mod.modules[local] = alias.name
                    else:
                        mod.names[local] = (node.module, alias.name)
        return mod


@dataclass
class Usage:
    """The session uses of the modules of one package against the protocols of ``found``."""

    found: Protocols
    modules: dict[str, _Module]
    escapes: list[str] = field(default_factory=list)  # "module.function: callee" where a session was lost
    _memo: dict[tuple[str, str, str], set[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, found: Protocols, sources: dict[str, str]) -> Usage:
        """The reader of ``sources`` (module name within the package → text)."""
        return cls(found, {name: _Module.read(name, text) for name, text in sources.items()})

    def receivers(self, func: FunctionNode) -> dict[str, str]:
        """The parameters of ``func`` typed with a protocol of :attr:`found`, each with its protocol."""
        args = [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]
        return {a.arg: p for a in args if (p := _annotation(a.annotation)) in self.found.own}

    def _targets(self, mod: _Module, cls: str | None, func: ast.expr) -> list[tuple[_Module, str, int]] | None:
        """The functions a call of ``func`` may run (module, qualified name, leading parameters the call does not
        pass: ``self``), or ``None`` when they cannot be told by name."""
        if isinstance(func, ast.IfExp):
            body, orelse = self._targets(mod, cls, func.body), self._targets(mod, cls, func.orelse)
            return None if body is None or orelse is None else body + orelse
        if isinstance(func, ast.Name):
            if func.id in mod.functions:
                return [(mod, func.id, 0)]
            if func.id in mod.classes:
                return [(mod, f"{func.id}.__init__", 1)]
            module, name = mod.names.get(func.id, ("", ""))
            target = self.modules.get(module)
            if target is not None and name in target.functions:
                return [(target, name, 0)]
            if target is not None and name in target.classes:
                return [(target, f"{name}.__init__", 1)]
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id == "self" and cls is not None and f"{cls}.{func.attr}" in mod.functions:
                return [(mod, f"{cls}.{func.attr}", 1)]
            target = self.modules.get(mod.modules.get(func.value.id, ""))
            if target is not None and func.attr in target.functions:
                return [(target, func.attr, 0)]
        return None

    def uses(self, mod: _Module, qualname: str, names: set[str], aliases: frozenset[str] = frozenset()) -> set[str]:
        """The members used on the session that the local ``names`` and the attributes ``self.<alias>`` hold in
        function ``qualname`` of ``mod`` (nested functions included), and through the calls it is passed to."""
        func = mod.functions[qualname]
        cls = qualname.split(".")[0] if "." in qualname else None
        names = set(names)
        for node in ast.walk(func):  # local aliases: ``ls = self._ls``
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                if _is_ref(node.value, names, aliases):
                    names.add(node.targets[0].id)
        out: set[str] = set()
        for node in ast.walk(func):
            if isinstance(node, ast.Attribute) and _is_ref(node.value, names, aliases):
                out.add(node.attr)
            elif isinstance(node, ast.Call):
                out |= self._passed(mod, cls, qualname, node, names, aliases)
        return out

    def _passed(
        self, mod: _Module, cls: str | None, qualname: str, call: ast.Call, names: set[str], aliases: frozenset[str]
    ) -> set[str]:
        positions = [i for i, a in enumerate(call.args) if _is_ref(a, names, aliases)]
        keywords = [k.arg for k in call.keywords if k.arg and _is_ref(k.value, names, aliases)]
        if not positions and not keywords:
            return set()
        targets = self._targets(mod, cls, call.func)
        if targets is None:
            self.escapes.append(f"{mod.name}.{qualname}: {ast.unparse(call.func)}")
            return {ALL}
        out: set[str] = set()
        for tmod, tname, skip in targets:
            func = tmod.functions[tname]
            params = [a.arg for a in [*func.args.posonlyargs, *func.args.args]][skip:]
            declared = self.receivers(func)
            for param in [params[i] for i in positions if i < len(params)] + keywords:
                if tmod is not mod and param in declared:  # another module's function: what its type asks for
                    out |= self.found.members(declared[param])
                    continue
                key = (tmod.name, tname, param)
                if key not in self._memo:
                    self._memo[key] = set()  # a recursive call adds nothing new
                    self._memo[key] = self.uses(tmod, tname, {param})
                out |= self._memo[key]
        return out

    def feature_objects(self, module: str) -> dict[str, tuple[str, set[str]]]:
        """Each class of ``module`` whose ``__init__`` receives a session protocol: that protocol, and the members
        the class uses in all its methods (the session it keeps, ``self.<name> = ls``, and every parameter typed
        with a protocol, as ``register(server)`` and its handlers)."""
        mod = self.modules[module]
        out = {}
        for cname, cnode in mod.classes.items():
            init = mod.functions.get(f"{cname}.__init__")
            held = self.receivers(init) if init is not None else {}
            if init is None or not held:
                continue
            param, protocol = next(iter(held.items()))
            aliases = frozenset(
                t.attr
                for node in ast.walk(init)
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id == param
                for t in node.targets
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
            )
            used: set[str] = set()
            for item in cnode.body:
                if isinstance(item, FunctionNode):
                    typed = {p for n in ast.walk(item) if isinstance(n, FunctionNode) for p in self.receivers(n)}
                    used |= self.uses(mod, f"{cname}.{item.name}", typed, aliases)
            out[cname] = (protocol, used)
        return out

    def handlers(self, module: str) -> dict[str, tuple[str, set[str]]]:
        """The module-level functions of ``module`` receiving a session protocol, by protocol: the members they
        use together."""
        mod = self.modules[module]
        out: dict[str, tuple[str, set[str]]] = {}
        for name, func in mod.functions.items():
            if "." not in name:
                for param, protocol in self.receivers(func).items():
                    out.setdefault(f"<{protocol} handlers>", (protocol, set()))[1].update(self.uses(mod, name, {param}))
        return out


def _is_ref(node: ast.expr, names: set[str], aliases: frozenset[str]) -> bool:
    if isinstance(node, ast.Name):
        return node.id in names
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
        and node.attr in aliases
    )


def unused(usage: Usage, objects: Sequence[str], handler_modules: Sequence[str] = ()) -> list[str]:
    """``"module.Feature: Protocol never uses a, b"`` for each feature object of the modules ``objects`` and each
    group of handlers of ``handler_modules`` (modules without a feature object) whose protocol has members it never
    uses; empty when each receives only what it uses."""
    out = []
    for module in sorted(set(objects) | set(handler_modules)):
        units = usage.feature_objects(module) if module in objects else {}
        if not units and module in handler_modules:
            units = usage.handlers(module)
        for unit, (protocol, used) in sorted(units.items()):
            missing = sorted(usage.found.members(protocol) - used) if ALL not in used else []
            if missing:
                out.append(f"{module}.{unit}: {protocol} never uses {', '.join(missing)}")
    return out


def read(package: Path) -> Usage:
    """The usage reader of every module of ``package`` (``memzoi_lsp``) against its session protocols."""
    found = protocols(
        *((package / f"{name}.py").read_text(encoding="utf-8") for name in ("session_members", "session"))
    )
    return Usage.of(found, {p.stem: p.read_text(encoding="utf-8") for p in sorted(package.glob("*.py"))})
