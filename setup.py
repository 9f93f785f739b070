"""Build hook: the wheel carries the diagnostics reference and the JSON Schemas as package data.

The repository keeps one copy of each (``docs/diagnostics.md``, ``schemas/*.schema.json``); ``build_py`` copies
them into ``memzoi/_data/`` of the build, where :mod:`memzoi.base.resources` finds them in an installed wheel. All
other metadata is in ``pyproject.toml``.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
SHIPPED = {"docs": ["diagnostics.md"], "schemas": sorted(p.name for p in (HERE / "schemas").glob("*.schema.json"))}


class BuildWithData(build_py):
    """``build_py`` that also copies the shipped reference files into ``memzoi/_data``."""

    def run(self):
        super().run()
        if self.editable_mode:  # an editable install reads them from the repository
            return
        for folder, names in SHIPPED.items():
            target = Path(self.build_lib) / "memzoi" / "_data" / folder
            target.mkdir(parents=True, exist_ok=True)
            for name in names:
                shutil.copyfile(HERE / folder / name, target / name)


setup(cmdclass={"build_py": BuildWithData})
