"""Start-up caches for the servers' protocol libraries (issue 29, start-up; issue 31, MCP start-up).

* :func:`attrs_code_cache`: ``attrs`` compiles the generated methods (``__init__``, ``__eq__``, ``__repr__`` …)
  of every class it builds from source text at each start; ``lsprotocol.types`` builds several hundred classes,
  and compiling their methods is about 40 % of that module's import. Within the context, each compiled method is
  taken from a ``marshal`` file of code objects when the same script under the same name was compiled before
  (the entry is keyed by a BLAKE2 digest of the generated name and source text, so a code object is only ever
  used for the exact text it was compiled from), and stored there when it was not. The file is named after the
  interpreter's bytecode magic number and the stat of the libraries' files (a new version writes a new file); a
  file that cannot be read or holds anything but that mapping is ignored and rewritten; it is written atomically
  (mode 0600). Measured on lsprotocol 2025.0 / attrs 26 (561 generated methods): the imports the server needs
  before ``initialize`` drop by about 80–100 ms of the 250–280 ms they take; reading the 1.2 MB file costs 20 ms.
  Nothing else of ``attrs`` changes, and outside the context nothing is patched.
* :func:`defer_package_init`: a package whose ``__init__`` imports far more than the submodules a caller needs
  (the MCP SDK's ``mcp`` imports its client, HTTP and auth stacks) is registered without running that
  ``__init__``; its submodules import as usual, and the ``__init__`` runs at the first access of a name it
  defines, so the package behaves as before for whoever uses it whole.

Neither imports a protocol library itself: the callers (``memzoi_lsp.__main__``, ``memzoi_mcp.server``) name
what they import.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import marshal
import os
import sys
import types
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

#: The private ``attrs`` function every generated method is compiled and evaluated through (attrs 22 to 26).
_HOOK = "_compile_and_eval"
#: The cache files' name prefix (their temporary files' family, :mod:`memzoi.base.privatewrite`).
FILE_PREFIX = "attrs-code-"
#: The name prefix of the hyperscan databases' cache files (:mod:`memzoi.safety.prefilter_cache`), kept here so that
#: a sweep of the cache folder (:mod:`memzoi.runs.leftovers`) names it without importing the detectors.
HYPERSCAN_PREFIX = "hyperscan-db-"


def _digest(filename: str, script: str) -> bytes:
    return hashlib.blake2b(f"{filename}\0{script}".encode("utf-8", "surrogatepass"), digest_size=16).digest()


def cache_file(directory: Path, packages: Iterable[str]) -> Path | None:
    """The cache file for the top-level ``packages`` (e.g. ``"lsprotocol"``; found without importing them):
    ``attrs-code-<digest>.marshal`` in ``directory``, the digest covering the interpreter's bytecode magic
    number and each package's ``__init__`` path, size and modification time (an install rewrites it) and
    ``attrs``'s; ``None`` when a package cannot be found."""
    parts = [importlib.util.MAGIC_NUMBER.hex(), sys.version]
    for name in ("attr", *packages):
        try:
            spec = importlib.util.find_spec(name)
            origin = spec.origin if spec is not None else None
            st = os.stat(origin) if origin else None
        except (ImportError, ValueError, OSError):
            return None
        if st is None:
            return None
        parts.append(f"{name}:{origin}:{st.st_size}:{st.st_mtime_ns}")
    key = hashlib.blake2b("\n".join(parts).encode("utf-8", "surrogatepass"), digest_size=10).hexdigest()
    return directory / f"{FILE_PREFIX}{key}.marshal"


def load_private(path: Path) -> object | None:
    """The ``marshal`` value stored in ``path``; ``None`` when the file is missing, unreadable, corrupt, a symbolic
    link or owned by another user (a cache of this process's user only: :func:`write_cache` writes it)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as fh:
            if hasattr(os, "getuid") and os.fstat(fh.fileno()).st_uid != os.getuid():
                return None
            value: object = marshal.load(fh)
            return value
    except (OSError, EOFError, ValueError, TypeError):
        return None


def read_cache(path: Path) -> dict[bytes, types.CodeType]:
    """The code objects stored in ``path`` by digest (:func:`load_private`); ``{}`` when it holds anything but a
    mapping of 16-byte digests to code objects."""
    data = load_private(path)
    if not isinstance(data, dict):
        return {}
    if not all(isinstance(k, bytes) and len(k) == 16 and isinstance(v, types.CodeType) for k, v in data.items()):
        return {}
    return data


def write_cache(path: Path, codes: Mapping[bytes, object], family: str | None = None) -> bool:
    """Write ``codes`` to ``path`` as ``marshal`` data, atomically (:func:`memzoi.base.privatewrite.write_private`: a
    temporary file of mode 0600 renamed over it), after removing what killed writers of caches whose names start
    with ``family`` (default: ``path``'s own) left. Returns whether it was written; a failure (a value ``marshal``
    cannot hold, a read-only or full disk) leaves the old file and raises nothing."""
    from .privatewrite import write_private  # noqa: PLC0415 lazy: start-up

    try:
        data = marshal.dumps(dict(codes))
    except ValueError:
        return False
    return write_private(path, data, family=family)


@contextlib.contextmanager
def attrs_code_cache(directory: Path | None, packages: Iterable[str]) -> Iterator[dict[str, int]]:
    """Within the context, ``attrs`` takes the code of the methods it generates from the cache file of
    :func:`cache_file` in ``directory`` (created 0700 by the caller). At exit the file is rewritten with the
    code used when more than one method in twenty was compiled anew (a generated ``__hash__`` holds the
    process's string-hash seed, so a few scripts differ at every start), and the files of other versions are
    removed. Yields counters ``{"hits", "misses"}``. Without a directory, without a cache file name or with an
    ``attrs`` lacking the hook, the context does nothing but yield."""
    stats = {"hits": 0, "misses": 0}
    make: types.ModuleType | None
    try:
        import attr._make as make  # noqa: PLC0415 lazy: start-up
    except ImportError:
        make = None
    original = getattr(make, _HOOK, None)
    path = cache_file(directory, packages) if directory is not None and original is not None else None
    if path is None:
        yield stats
        return
    stored = read_cache(path)
    used: dict[bytes, types.CodeType] = {}
    future = getattr(make, "annotations", None)  # attrs compiles under its module's `from __future__` flags
    flags = getattr(future, "compiler_flag", 0) if type(future).__name__ == "_Feature" else 0

    def compile_and_eval(
        script: str, globs: dict[str, Any], locs: Mapping[str, object] | None = None, filename: str = ""
    ) -> None:
        key = _digest(filename, script)
        code = stored.get(key)
        if code is None:
            code = compile(script, filename, "exec", flags=flags, dont_inherit=True)
            stats["misses"] += 1
        else:
            stats["hits"] += 1
        used[key] = code
        eval(code, globs, locs)

    setattr(make, _HOOK, compile_and_eval)
    try:
        yield stats
    finally:
        setattr(make, _HOOK, original)
        if stats["misses"] > stats["hits"] // 20:  # not for the few scripts that differ at every start
            if write_cache(path, used, FILE_PREFIX):
                for old in path.parent.glob(f"{FILE_PREFIX}*.marshal"):
                    if old != path:
                        with contextlib.suppress(OSError):
                            old.unlink()


def defer_package_init(name: str) -> bool:
    """Register package ``name`` (e.g. ``"mcp"``, then ``"mcp.server"``) without running its ``__init__``: its
    submodules import as usual; the ``__init__`` runs at the first access of a name the module does not hold
    yet (``from mcp import Client``, ``mcp.Client``). Returns ``False`` (and changes nothing) when the package
    is already imported, is not found, or is no package; its parent must be imported or deferred first."""
    if name in sys.modules:
        return False
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    loader = spec.loader if spec is not None else None
    if spec is None or loader is None or spec.submodule_search_locations is None:
        return False
    module = importlib.util.module_from_spec(spec)
    ran: list[bool] = []

    def __getattr__(attr: str) -> Any:
        if ran:
            raise AttributeError(f"module {name!r} has no attribute {attr!r}")
        ran.append(True)
        loader.exec_module(module)
        return getattr(module, attr)

    module.__dict__["__getattr__"] = __getattr__  # a module's __getattr__ (PEP 562), not a method
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent and parent in sys.modules:
        setattr(sys.modules[parent], child, module)
    return True


__all__ = [
    "FILE_PREFIX",
    "HYPERSCAN_PREFIX",
    "attrs_code_cache",
    "cache_file",
    "defer_package_init",
    "load_private",
    "read_cache",
    "write_cache",
]
