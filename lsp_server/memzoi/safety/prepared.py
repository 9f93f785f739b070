"""Importing this module compiles the detectors' hyperscan prefilter (:func:`.prefilter.prepare`) after every
detector has declared its patterns: a run over many files imports it before its workers fork (it is in
:data:`memzoi.base.parallel.PRELOAD`), so the database is compiled once, in the parent or the fork server."""

from __future__ import annotations

from . import scan as _scan  # noqa: F401 - every detector module, so every pattern is declared
from .prefilter import prepare

ENGINE = prepare()

__all__ = ["ENGINE"]
