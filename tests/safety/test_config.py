"""`.memzoi/config.toml`: model, tolerant loading, caching by mtime, and its JSON Schema."""

from __future__ import annotations

import json
import os

import pytest

from memzoi.judge.config import clear_cache, load_config, parse_config
from memzoi.judge.config_model import MemzoiConfig
from memzoi.models.schemas import generate

from ..conftest import ROOT


@pytest.fixture(autouse=True)
def _fresh():
    clear_cache()
    yield
    clear_cache()


def test_defaults_when_absent(tmp_path):
    loaded = load_config(tmp_path / ".memzoi")
    assert loaded.config.project_id is None and loaded.config.accepted == frozenset() and loaded.errors == ()
    assert load_config(None).config == MemzoiConfig()


def test_reads_project_id_and_fingerprints_and_ignores_unknown_sections():
    fp = "ab" * 32
    loaded = parse_config(
        f'[project]\nid = " memzoi "\nname = "x"\n[safety]\naccepted_fingerprints = ["blake3:{fp.upper()}"]\n[index]\nfoo = 1\n'
    )
    assert loaded.errors == ()
    assert loaded.config.project_id == "memzoi"
    assert loaded.config.accepted == {fp}


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("[project\nid = 1", "invalid TOML"),
        ("[project]\nid = 3\n", "project.id"),
        ('[safety]\naccepted_fingerprints = ["nope"]\n', "64 hex"),
        ('[project]\nid = "  "\n', "non-empty"),
    ],
)
def test_invalid_config_gives_defaults_and_a_clear_error(text, fragment):
    loaded = parse_config(text)
    assert loaded.config == MemzoiConfig()
    assert len(loaded.errors) == 1 and fragment in loaded.errors[0]


def test_cache_follows_mtime(tmp_path):
    mz = tmp_path / ".memzoi"
    mz.mkdir()
    cfg = mz / "config.toml"
    cfg.write_text('[project]\nid = "a"\n', encoding="utf-8")
    first = load_config(mz)
    assert load_config(mz) is first  # cached
    cfg.write_text('[project]\nid = "bb"\n', encoding="utf-8")
    st = cfg.stat()
    os.utime(cfg, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert load_config(mz).config.project_id == "bb"


def test_config_schema_is_registered_and_committed():
    text = generate()["config.schema.json"]
    schema = json.loads(text)
    assert set(schema["properties"]) == {"project", "safety", "rules", "promotion", "resident", "mcp"}
    assert (ROOT / "schemas" / "config.schema.json").read_text(encoding="utf-8") == text
