"""Folder names that bear a credential, for the tests that check no output names a local path raw: a project
folder, a memzoi home and a user's configuration folder, each named after a GitHub-token-shaped name built here (no
credential is in the repository's files). :func:`assert_no_token` never quotes what it checks."""

from __future__ import annotations

import pytest

#: The project folder's name, the memzoi home's and the user's Zuno configuration folder's.
ROOT_TOKEN = "ghp_" + "a1b2c3d4e5" * 3 + "f6g7h8"
HOME_TOKEN = "ghp_" + "z9y8x7w6v5" * 3 + "u4t3s2"
USER_TOKEN = "ghp_" + "q1w2e3r4t5" * 3 + "y6u7i8"


def assert_no_token(out: str) -> None:
    """No token appears in ``out`` (never quoted in the failure message)."""
    # pytest.fail, not assert: an assertion's report would quote ``out``
    if ROOT_TOKEN in out:
        pytest.fail("the project folder's token was printed")
    if HOME_TOKEN in out:
        pytest.fail("the memzoi home's token was printed")
    if USER_TOKEN in out:
        pytest.fail("the user's configuration folder's token was printed")
