"""Issue 19: redaction recognises secrets of the common formats by pattern, and a listed value in its
encodings, without eating ordinary text: commit ids, sha256 digests wb writes, ULIDs, task ids and paths."""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import quote

import pytest

from workbench.model.redaction import REDACTED, redact, redact_text

SECRETS = {
    "aws key id": ("id AKIAIOSFODNN7EXAMPLE ok", "IOSFODNN7EXAMPLE"),
    "aws secret": ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
    "aws pair": ("AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
    "github": ("GH=ghp_16C7e42F292c6912E7710c838347Ae178B4a", "16C7e42F292c6912E77"),
    "github pat": ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789", "0123456789_abc"),
    "pem": ("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oaqqxXkFz4pKoAoGCCqGSM49\n"
            "-----END EC PRIVATE KEY-----", "MHcCAQEEIBkg4LVWM9"),
    "jwt": ("t eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "dozjgNryP4J3jVmNHl0w5N"),
    "url password": ("postgres://app:Hunter2Pass@db.internal/prod", "Hunter2Pass"),
    "openai": ("sk-proj-abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz0123"),
    "anthropic": ("sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789-_AAAA", "abcdefghijklmnopqrstuvwxyz0123"),
    "slack": ("xoxb-123456789012-123456789012-abcdefghijklmnopqrstuvwx", "abcdefghijklmnopqrstuvwx"),
    "stripe": ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"),
    "google": ("AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI", "SyDdI0hCZtE6vySjMm"),
    "token assignment": ("export DEPLOY_TOKEN=s3cr3t-value-1", "s3cr3t-value-1"),
    "json secret": ('{"client_secret": "abcd1234efgh"}', "abcd1234efgh"),
    "password": ("password: correct-horse", "correct-horse"),
    "bearer": ("Authorization: Bearer abcdef0123456789ABCDEF", "abcdef0123456789ABCDEF"),
}


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_each_format_is_redacted_by_pattern(name: str) -> None:
    text, material = SECRETS[name]
    out = redact_text(text, [])
    assert material not in out and REDACTED in out, out
    assert redact_text(out, []) == out  # idempotent


ORDINARY = [
    "commit 3f2a9c1e5b7d8f0a1c2e3d4f5a6b7c8d9e0f1a2b on main",
    "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "event 01KBF7ZP3XQ9M2N4V6W8Y0A1BC by agent, T-001 and T-1234",
    ".workbench/artifacts/01KBF7ZP3XQ9M2N4V6W8Y0A1BC_s1_1.stdout.txt",
    "/usr/lib/python3.11/site-packages/ruamel/yaml/constructor.py",
    "src/main/java/com/example/project/module/SomeClassNameHere/Another",
    "max_tokens=100 tokens_consumed: 5 if token == other:",
    "AbstractSingletonProxyFactoryBeanTestImplementation2",
    "http://localhost:8080/path git@github.com:org/repo.git ssh://git@host/x",
    "2026-12-01T00:00:00.000Z the token is valid; read the secret docs",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact_text(text, []) == text


def test_a_listed_value_in_its_encodings() -> None:
    pw = "Zq8#mR2!vL9@pw-x"
    pem = "-----BEGIN KEY-----\nAAAABBBBCCCCDDDD1111\nEEEEFFFFGGGGHHHH2222\n-----END KEY-----"
    for text in [pw, json.dumps(pw), json.dumps(json.dumps(pw)), base64.b64encode(pw.encode()).decode(),
                 base64.urlsafe_b64encode(pw.encode()).decode(), quote(pw, safe=""), "  " + pw,
                 "out: " + pw[:10], pw[-10:] + " tail"]:
        out = redact_text("v " + text, [pw])
        assert pw[:8] not in out and pw[-8:] not in out and quote(pw, safe="")[:10] not in out, (text, out)
    for text in [pem.replace("\n", "\r\n"), "\n".join("    " + line for line in pem.splitlines()),
                 "only EEEEFFFFGGGGHHHH2222 here", json.dumps(pem)]:
        out = redact_text(text, [pem])
        assert "AAAABBBB" not in out and "EEEEFFFF" not in out, (text, out)


def test_deep_payloads_are_walked_without_recursion() -> None:
    deep: Any = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
    for _ in range(5000):
        deep = {"k": [deep]}
    out = redact(deep, [])
    for _ in range(5000):
        out = out["k"][0]
    assert out == REDACTED
    plain = {"a": [1, "x", {"b": "y"}]}
    assert redact(plain, []) is plain


def test_a_text_redacted_once_is_left_as_it_is_the_second_time() -> None:
    """Known-format rules run only on texts of 12 characters or more, measured without what is [redacted]
    already: a short text whose listed value was redacted (and grew longer for it) is not matched again."""
    once = redact_text("q://::q@", ["q"])
    assert once == "[redacted]://::[redacted]@"
    assert redact_text(once, ["q"]) == once
