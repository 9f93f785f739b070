"""The test run keeps to its temporary folders: runtime state never lands in the user's home."""

import os
from pathlib import Path


def test_runtime_home_and_zuno_folder_are_private_to_the_test_run(tmp_path_factory):
    base = Path(tmp_path_factory.getbasetemp())
    for name in ("MEMZOI_HOME", "ZUNO_CONFIG_DIR"):
        value = Path(os.environ[name])
        assert base in value.parents, (name, value)
