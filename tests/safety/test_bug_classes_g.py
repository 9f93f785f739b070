"""Section G of the shared bug classes (secret detection false positives and negatives), each fixture placed once
in the frontmatter and once in the body of a record. Secret-shaped strings are assembled at test time."""

from __future__ import annotations

import base64
import json
import random
import string

import pytest

from memzoi.base.findings import Severity
from memzoi.judge.analysis import analyze_text

from .helpers import SAFETY_CODES, record, workspace

R = random.Random(39)


def rand(alphabet: str, n: int) -> str:
    return "".join(R.choice(alphabet) for _ in range(n))


def place(tmp_path, snippet: str, where: str) -> tuple[str, object]:
    """A record holding ``snippet`` as frontmatter lines (``where == "frontmatter"``) or in the body."""
    path = workspace(tmp_path) / "records" / "rec.md"
    if where == "frontmatter":
        return record(extra="capture:\n" + "".join("  " + line + "\n" for line in snippet.splitlines())), path
    return record(body=snippet), path


def findings(text: str, path) -> list:
    out = [f for f in analyze_text(text, path).findings if f.code in SAFETY_CODES]
    # a second scan of unchanged content gives exactly the same findings
    again = [f for f in analyze_text(text, path).findings if f.code in SAFETY_CODES]
    assert [(f.code, f.start, f.end, f.message) for f in out] == [(f.code, f.start, f.end, f.message) for f in again]
    return out


def assert_redacted(found, *secrets: str) -> None:
    for f in found:
        for s in secrets:
            assert s not in f.message and s[:12] not in f.message
            assert all(s not in str(v) for v in f.data.values())


WHERE = ["frontmatter", "body"]


@pytest.mark.parametrize("where", WHERE)
def test_b39_aws_secret_access_key(tmp_path, where):
    key_id = "AK" + "IA" + rand(string.ascii_uppercase + "234567", 16)
    secret = rand(string.ascii_letters + string.digits + "/+", 40)
    text, path = place(tmp_path, f"aws_access_key_id: {key_id}\naws_secret_access_key: {secret}", where)
    found = findings(text, path)
    by_code = {f.code: f for f in found}
    # Memzoi's own rules add high_entropy_value on a random secret (its catch-all has no AWS rule)
    assert (
        {"credential_token", "cloud_credential"}
        <= set(by_code)
        <= {"credential_token", "cloud_credential", "high_entropy_value"}
    )
    assert text[by_code["credential_token"].start : by_code["credential_token"].end] == key_id
    assert text[by_code["cloud_credential"].start : by_code["cloud_credential"].end] == secret
    if "high_entropy_value" in by_code:
        assert text[by_code["high_entropy_value"].start : by_code["high_entropy_value"].end] == secret
    assert all(f.severity == Severity.ERROR for f in found)
    assert_redacted(found, key_id, secret)


@pytest.mark.parametrize("where", WHERE)
def test_b39_documented_example_key_id_is_refused_as_memzoi_refuses_it(tmp_path, where):
    # Memzoi's known_credential_prefix rule has no allow list, so AWS's documented example key id is refused;
    # the example secret key contains "EXAMPLE", one of Memzoi's placeholder words, and stays clean.
    example_id = "AKIA" + "IOSFODNN7" + "EXAMPLE"
    example_secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
    text, path = place(tmp_path, f"aws_access_key_id: {example_id}\naws_secret_access_key: {example_secret}", where)
    (f,) = findings(text, path)
    assert f.code == "credential_token" and f.severity == Severity.ERROR and text[f.start : f.end] == example_id
    assert "known_credential_prefix" in f.message


def _pem() -> tuple[str, str, list[str]]:
    head = "-----BEGIN " + "OPENSSH PRIVATE KEY-----"
    foot = "-----END " + "OPENSSH PRIVATE KEY-----"
    return head, foot, [rand(string.ascii_letters + string.digits + "+/", 70) for _ in range(5)]


@pytest.mark.parametrize("where", WHERE)
def test_b41a_flattened_private_key(tmp_path, where):
    head, foot, body = _pem()
    key = f"{head} {' '.join(body)} {foot}"
    text, path = place(tmp_path, f'deploy_key: "{key}"', where)
    (f,) = findings(text, path)
    assert f.code == "private_key" and f.severity == Severity.ERROR
    assert text[f.start : f.end] == key  # the range covers the whole key
    assert_redacted([f], *body)


@pytest.mark.parametrize("where", WHERE)
def test_b41b_private_key_in_block_scalar(tmp_path, where):
    head, foot, body = _pem()
    snippet = "deploy_key: |\n" + "\n".join("  " + line for line in [head, *body, foot])
    text, path = place(tmp_path, snippet, where)
    (f,) = findings(text, path)
    assert f.code == "private_key"
    covered = text[f.start : f.end]
    assert covered.startswith(head) and covered.endswith(foot) and all(b in covered for b in body)


@pytest.mark.parametrize("where", WHERE)
def test_b41c_header_only_mention_is_not_a_finding(tmp_path, where):
    marker = "BEGIN " + "PRIVATE KEY"
    snippet = (
        f"note: the loader searches for a `{marker}` marker"
        if where == "frontmatter"
        else (f"The loader searches for a `{marker}` marker.")
    )
    text, path = place(tmp_path, snippet, where)
    assert findings(text, path) == []


def _b64u(obj) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")


@pytest.mark.parametrize("where", WHERE)
def test_b42a_jwt_under_a_neutral_key(tmp_path, where):
    token = ".".join(
        [
            _b64u({"alg": "HS256", "typ": "JWT"}),
            _b64u({"sub": "u1", "exp": 4102444800}),
            rand(string.ascii_letters + string.digits + "-_", 43),
        ]
    )
    text, path = place(tmp_path, f"session: {token}", where)
    (f,) = findings(text, path)
    # Memzoi's cookie_or_session rule matches `session: <value>`; its span holds the token
    assert f.code == "session_token" and f.severity == Severity.ERROR and token in text[f.start : f.end]
    assert_redacted([f], token)


def test_b42b_unsigned_example_jwt_in_fence_is_information(tmp_path):
    token = "eyJhbGciOiJub25lIn0" + ".eyJzdWIiOiJkZW1vIn0."
    text, path = place(tmp_path, f"Example:\n\n```\n{token}\n```", "body")
    (f,) = findings(text, path)
    assert f.code == "session_token" and f.severity == Severity.INFORMATION
    # outside a fence it is a warning, still not an error
    text, path = place(tmp_path, f"token: {token}", "frontmatter")
    (f,) = findings(text, path)
    assert f.severity == Severity.WARNING


@pytest.mark.parametrize("where", WHERE)
def test_b44_long_identifier_is_not_high_entropy(tmp_path, where):
    snippet = 'note: "recallNoticesRecallBusinessUnitsValidationGroup"'
    text, path = place(tmp_path, snippet, where)
    assert findings(text, path) == []


@pytest.mark.parametrize("where", WHERE)
def test_b45_prose_about_passwords(tmp_path, where):
    line = "Rotate the username/password combination every quarter."
    text, path = place(tmp_path, f'note: "{line}"' if where == "frontmatter" else line, where)
    assert findings(text, path) == []


@pytest.mark.parametrize("where", WHERE)
def test_b48_punctuation_password(tmp_path, where):
    pw = "q7]K^$6bc!hU}" + "Z;VRURf=j9F-}6~Xh~ykM.bKx"
    text, path = place(tmp_path, f"passphrase: '{pw}'", where)
    (f,) = findings(text, path)
    assert f.code == "credential_token" and text[f.start : f.end] == pw
    assert "passphrase" in f.message
    assert_redacted([f], pw)


def test_b42_unsigned_jwt_grade_is_configurable(tmp_path):
    from memzoi.judge.config import clear_cache

    token = "eyJhbGciOiJub25lIn0" + ".eyJzdWIiOiJkZW1vIn0."
    text, path = place(tmp_path, f"token: {token}", "frontmatter")
    workspace(tmp_path, '[safety]\nunsigned_jwt = "error"\n')
    clear_cache()
    (f,) = findings(text, path)
    assert f.severity == Severity.ERROR
    fenced, _ = place(tmp_path, f"```\n{token}\n```", "body")
    (g,) = findings(fenced, path)
    assert g.severity == Severity.INFORMATION  # an example stays an example
    clear_cache()
