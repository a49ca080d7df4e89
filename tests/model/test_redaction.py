"""The one redaction function (workbench.model.redaction): every occurrence of every secret goes, whatever the
order the secrets are given in and however they overlap — nested (one inside another), overlapping (sharing
characters), repeated, adjacent — and nothing else changes."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.model.redaction import REDACTED, redact, redact_text

# Letters that are not in "[redacted]": a secret can then neither hide in the marker nor straddle it, so "no
# secret in the result" is exactly the property, not a coincidence of the alphabet.
ALPHABET = "xyzwq"
secret_st = st.text(ALPHABET, min_size=1, max_size=5)
secrets_st = st.lists(secret_st, min_size=1, max_size=4, unique=True)


@st.composite
def text_with_secrets(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A text built from secrets (repeated, adjacent, nested in each other) and filler around them. The filler
    has no "/": with it, filler alone can spell a URL's password (`x://:p@`), which the known-format rules
    redact too (tests/model/test_redaction_patterns.py), and this property is about the listed values."""
    secrets = draw(secrets_st)
    if draw(st.booleans()):  # one secret inside another, as DB_USER inside DATABASE_URL
        inner = secrets[0]
        # at most 9 characters: a longer one is also looked for cut (its head or tail at a word's edge), which
        # `covered` does not model (tests/security/test_secret_formats.py covers the cut values)
        secrets.append(draw(st.text(ALPHABET, max_size=2)) + inner + draw(st.text(ALPHABET, min_size=1, max_size=2)))
        secrets = list(dict.fromkeys(secrets))
    pieces = draw(st.lists(st.one_of(st.sampled_from(secrets), st.text(ALPHABET + " :@", max_size=4)),
                           max_size=12))
    return "".join(pieces), secrets


def covered(text: str, secrets: list[str]) -> list[bool]:
    mask = [False] * len(text)
    for s in secrets:
        at = text.find(s)
        while at != -1:
            mask[at:at + len(s)] = [True] * len(s)
            at = text.find(s, at + 1)
    return mask


@settings(max_examples=300, deadline=None)
@given(text_with_secrets(), st.randoms())
def test_no_secret_survives_in_any_order_and_nothing_else_changes(case: tuple[str, list[str]], rnd: Any) -> None:
    text, secrets = case
    out = redact_text(text, secrets)
    for s in secrets:
        assert s not in out, (text, secrets, out)
    shuffled = list(secrets)
    rnd.shuffle(shuffled)
    assert redact_text(text, shuffled) == out  # config order does not matter
    mask = covered(text, secrets)
    assert out.replace(REDACTED, "") == "".join(c for c, hidden in zip(text, mask, strict=True) if not hidden)
    assert (REDACTED in out) == any(mask)
    assert redact_text(out, secrets) == out  # idempotent


def test_the_reported_case_longest_first() -> None:
    user, url = "app", "postgres://app:Hunter2Pass@db.internal/prod"
    for order in ([user, url], [url, user]):
        assert redact_text(f"connect {url} as {user}", order) == "connect [redacted] as [redacted]"


def test_overlapping_and_adjacent() -> None:
    assert redact_text("abcd", ["abc", "bcd"]) == "[redacted]"  # sharing characters: one stretch
    assert redact_text("SECRETSECRET", ["SECRET"]) == "[redacted][redacted]"  # adjacent: two
    assert redact_text("aaaa", ["aa"]) == "[redacted]"
    assert redact_text("nothing here", ["abc"]) == "nothing here"


json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), text_with_secrets().map(lambda c: c[0]))


@settings(max_examples=100, deadline=None)
@given(secrets_st, st.data())
def test_nested_documents_keys_and_values(secrets: list[str], data: st.DataObject) -> None:
    pieces = st.lists(st.one_of(st.sampled_from(secrets), st.text(ALPHABET, max_size=3)), max_size=5).map("".join)
    doc = data.draw(st.recursive(st.one_of(st.none(), st.integers(), pieces),
                                 lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(pieces, inner, max_size=4)),
                                 max_leaves=20))
    out = json.dumps(redact(doc, secrets), ensure_ascii=False)
    for s in secrets:
        assert s not in out


def test_no_secrets_no_copy_and_deep_payloads() -> None:
    doc = {"a": [1, "x"]}
    assert redact(doc, []) is doc
    deep: Any = "s3cr3t"
    for _ in range(600):  # a hook payload nested deeply is still redacted, not a RecursionError
        deep = [deep]
    out = redact(deep, ["s3cr3t"])
    for _ in range(600):
        out = out[0]
    assert out == REDACTED
