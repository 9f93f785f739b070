"""What the core finds from its own location is the package's folder, wherever the module lives in the package (the
layout move puts ``resources`` and ``toolstamp`` one folder deeper)."""

import os
from pathlib import Path

import memzoi
from memzoi.base import resources
from memzoi.stores import toolstamp

PACKAGE = Path(memzoi.__file__).resolve().parent


def test_the_tool_stamp_digests_the_whole_package():
    assert Path(toolstamp.package_dir()).resolve() == PACKAGE
    assert os.path.isfile(os.path.join(toolstamp.package_dir(), "__init__.py"))


def test_shipped_files_are_found_from_the_package_folder():
    assert resources._PACKAGE == PACKAGE
    assert resources.shipped("docs", "diagnostics.md") is not None
