"""Secrets kept out of the record: events, state.md, board.json, calls.jsonl, artifacts, a commit message, a
hook's or the MCP server's answer, an error message and `wb diff` hold neither

- the values of the environment variables config.yaml `redact` names, in the encodings they travel in: as they
  are, JSON-escaped (once or twice), base64 (standard or URL-safe, alone or inside a longer base64 text),
  URL-encoded, each line of a multi-line value (a PEM key: indented, CRLF, one line quoted alone), and a long
  value cut at a size limit (its head where a text, line or word ends, its tail where one starts); nor
- a secret of a well-known format, recognised by pattern (after the rule sets of gitleaks and detect-secrets):
  AWS access key ids and the secret keys beside them, GitHub, GitLab, Slack, Stripe, Google, OpenAI/Anthropic,
  npm, PyPI and Hugging Face tokens, PEM private key blocks, JWTs, bearer tokens, the password of a URL
  (scheme://user:pass@host), `*_TOKEN=`, `*_SECRET=`, `password:` assignments, and long base64 text of high
  entropy. Hex strings (commit ids, sha256 digests), ULIDs, task ids and paths are not secrets.

This is the one redaction function; every path that records or shows a value calls `redact` (or
`redact_text`). Replacing secrets one after another is wrong when one value holds another (DB_USER=app inside
DATABASE_URL=postgres://app:pw@db: replacing `app` first leaves `pw` behind), so every occurrence of every
secret and every pattern is found in the original text first, overlapping occurrences are merged, and each
merged stretch becomes one `[redacted]`; a longer secret therefore always goes whole.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing's: redaction is on every agent hook's path, which imports no typing
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

REDACTED = "[redacted]"
MIN_PIECE = 8  # characters: an encoding, a line or a cut head/tail of a listed value shorter than this is not
#                looked for on its own (it would match ordinary text)

# Every secret value this process has been told of (by `secret_values`): what an error line, a hook's
# complaint or an MCP answer is scrubbed of, where no workbench is at hand.
_known: set[str] = set()


def secret_values(config: dict[str, Any]) -> list[str]:
    """The values of the environment variables that config.yaml `redact` names, longest first."""
    names = config.get("redact") or []
    if not isinstance(names, list):
        return []
    values = sorted({os.environ[n] for n in names if isinstance(n, str) and os.environ.get(n)},
                    key=lambda s: (-len(s), s))
    _known.update(values)
    return values


def known_secrets() -> list[str]:
    """Every secret value `secret_values` has returned in this process, longest first."""
    return sorted(_known, key=lambda s: (-len(s), s))


# -- secrets of a known format -------------------------------------------------------------------------------
_B64 = "A-Za-z0-9+/"
_PEM_BODY = r"[A-Za-z0-9+/=\s\\:,.-]"
# (literals one of which the text holds, in lower case, before the pattern is tried; pattern; group): the
# group's text is the secret (0: the whole match). A rule starts with its literal, so the search is fast.
_ASSIGN_WORDS = ("token", "secret", "passw", "pwd", "passphrase", "key", "credential")
_ASSIGN = (r"(?i:token|secret|passw(?:or)?d|pwd|passphrase|api[_-]?key|access[_-]?key(?:[_-]?id)?|private[_-]?key|"
           r"credentials?)(?:\\?[\"'])?[ \t]{0,4}(?::=|=>|:|=)(?![=>])[ \t]{0,4}")
_RULES: list[tuple[tuple[str, ...], str, int]] = [
    # PEM private key blocks, whole (the body may be indented, CRLF, JSON-escaped), or cut before their END line
    (("-----begin",), r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:" + _PEM_BODY +
     r"{0,65536}?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|" + _PEM_BODY + r"{0,65536})", 0),
    (("akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa", "anva", "aipa", "a3t"),
     r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|A3T[A-Z0-9])(?<![A-Za-z0-9]....)[A-Z0-9]{16}"
     r"(?![A-Za-z0-9])", 0),
    (("akia", "asia"),  # an AWS secret access key written after its key id
     r"(?:AKIA|ASIA)[A-Z0-9]{16}[\s\S]{1,200}?(?<![A-Za-z0-9/+])(?![0-9a-f]{40})([A-Za-z0-9/+]{40})"
     r"(?![A-Za-z0-9/+=])", 1),
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"gh[pousr]_(?<![A-Za-z0-9_]....)[A-Za-z0-9]{20,255}", 0),
    (("github_pat_",), r"github_pat_[A-Za-z0-9_]{20,255}", 0),
    (("glpat-",), r"glpat-[A-Za-z0-9_-]{20,}", 0),
    (("xox",), r"xox[abposre]-(?<![A-Za-z0-9_-].....)[A-Za-z0-9-]{10,}", 0),
    (("hooks.slack.com",), r"hooks\.slack\.com/services/[A-Za-z0-9_/]{20,}", 0),
    (("_live_", "_test_"), r"[sr]k_(?:live|test)_(?<![A-Za-z0-9_]...live_|[A-Za-z0-9_]...test_)[A-Za-z0-9]{10,}",
     0),
    (("whsec_",), r"whsec_[A-Za-z0-9]{20,}", 0),
    (("aiza",), r"AIza(?<![A-Za-z0-9_-]....)[0-9A-Za-z_-]{35}", 0),
    (("sk-",), r"sk-(?<![A-Za-z0-9_-]...)[A-Za-z0-9_-]{20,}", 0),  # OpenAI sk-…, sk-proj-…; Anthropic sk-ant-…
    (("npm_",), r"npm_(?<![A-Za-z0-9_]....)[A-Za-z0-9]{36}", 0),
    (("hf_",), r"hf_(?<![A-Za-z0-9_]...)[A-Za-z]{30,}", 0),
    (("pypi-",), r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{20,}", 0),
    (("eyj",), r"eyJ(?<![A-Za-z0-9_-]...)[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", 0),  # a JWT
    (("bearer",), r"(?i:bearer)\s+([A-Za-z0-9._~+/-]{12,}=*)", 1),
    # the password of a URL: scheme://user:PASS@host (up to the last @ before the path)
    (("://",), r"://[^\s/?#@:\"'<>\\]{0,200}:([^\s/?#\"'<>\\]{1,200})@", 1),
    # NAME_TOKEN=value, "api_key": "value", password: value, secret => value (the name ends in the keyword); the
    # whole value (issue 30): a quoted one to its closing quote, any other to the end of its line — a space, `;`,
    # `,` or a quote inside a password is part of it — or to the quote that closes the JSON string it sits in
    (_ASSIGN_WORDS, _ASSIGN + r"\\?([\"'`])(?!\[redacted\])((?:(?!\\?\1)[^\r\n]){1,1000})", 2),
    (_ASSIGN_WORDS, _ASSIGN + r"(?![ \t\\\"'`]|\[redacted\])((?:[^\r\n\"\\]|\\(?![nr\"])|\"(?![ \t]*(?:[,}\]:]|$)))"
     r"{3,1000})", 1),
]
_compiled: dict[str, Any] = {}  # compiled on first use: a hook's process pays only for the rules its text needs


def _rx(pattern: str) -> Any:
    rx = _compiled.get(pattern)
    if rx is None:
        import re

        rx = _compiled[pattern] = re.compile(pattern)
    return rx


_BASE64_RUN = r"[" + _B64 + r"]{40,}={0,2}"
_HEX = r"[0-9a-fA-F]+"
_WORD = r"[a-z]{2,}[0-9]*|[A-Z][a-z]+[0-9]*|[0-9]*"


def _entropy(s: str) -> float:
    import math

    counts: dict[str, int] = {}
    for c in s:
        counts[c] = counts.get(c, 0) + 1
    n = len(s)
    return -sum(k / n * math.log2(k / n) for k in counts.values())


def _high_entropy(run: str) -> bool:
    """A long base64 run that is a key, not a word, a path or a digest: both cases, a digit or a symbol, no
    short path segments, and close to random."""
    body = run.rstrip("=")
    if _rx(_HEX).fullmatch(body):  # commit ids, sha256 digests
        return False
    if not (any(c.isupper() for c in body) and any(c.islower() for c in body)
            and sum(c.isdigit() or c in "+/" for c in body) >= 2):
        return False
    if "/" in body and any(_rx(_WORD).fullmatch(part) for part in body.split("/")):  # a path: a segment is a word
        return False
    return _entropy(body) >= 4.25


def _pattern_spans(text: str) -> list[tuple[int, int]]:
    spans = []
    lower = text.lower()
    for words, pattern, group in _RULES:
        if not any(w in lower for w in words):
            continue
        for m in _rx(pattern).finditer(text):
            start, end = m.start(group), m.end(group)
            while end > start and text[end - 1] in " \t":  # a value taken to the end of its line: not its spaces
                end -= 1
            if start < end:
                spans.append((start, end))
    for m in _rx(_BASE64_RUN).finditer(text) if len(text) >= 40 else ():
        if _high_entropy(m.group()):
            spans.append(m.span())
    return spans


# -- listed values and their encodings ------------------------------------------------------------------------
_forms_cache: dict[str, tuple[list[str], str, str]] = {}


def _forms(secret: str) -> tuple[list[str], str, str]:
    """(every form the value travels in, the head and the tail looked for when it is cut at a size limit)."""
    cached = _forms_cache.get(secret)
    if cached is not None:
        return cached
    import base64
    import json
    from urllib.parse import quote, quote_plus

    forms = {secret}
    pieces = {secret}
    if "\n" in secret or "\r" in secret:
        pieces.add(secret.replace("\r\n", "\n").replace("\n", "\r\n"))
        pieces.add(secret.replace("\r\n", "\n"))
        pieces.update(line.strip() for line in secret.splitlines())
    for piece in list(pieces):
        once = json.dumps(piece, ensure_ascii=False)[1:-1]
        pieces.update({once, json.dumps(piece)[1:-1], json.dumps(once, ensure_ascii=False)[1:-1]})
    try:
        data = secret.encode("utf-8")
    except UnicodeEncodeError:
        data = b""
    for k in (0, 1, 2):  # alone, and at each alignment inside a longer base64 text: the blocks it fills alone
        if not data:
            break
        full = base64.b64encode(b"\0" * k + data).decode()
        core = full[4 if k else 0: 4 * ((k + len(data)) // 3)]
        for enc in (full.rstrip("=") if not k else "", core):
            if enc:
                pieces.update({enc, enc.replace("+", "-").replace("/", "_")})
    for piece in (secret, *(line.strip() for line in secret.splitlines())):
        for enc in (quote(piece, safe=""), quote(piece), quote_plus(piece)):
            pieces.update({enc, _rx(r"%[0-9A-F]{2}").sub(lambda m: m.group().lower(), enc)})
    forms.update(p for p in pieces if len(p) >= MIN_PIECE)
    head = secret[:MIN_PIECE] if len(secret) > MIN_PIECE + 1 else ""
    found = (sorted(forms, key=lambda s: (-len(s), s)), head, secret[-MIN_PIECE:] if head else "")
    if len(_forms_cache) > 256:
        _forms_cache.clear()
    _forms_cache[secret] = found
    return found


_CUT_EDGE = "\r\n\t …\"'"  # where a cut value's head ends (its tail starts): a text's, a line's or a word's edge


def _listed_spans(text: str, secrets: Sequence[str]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for secret in secrets:
        if not secret:
            continue
        forms, head, tail = _forms(secret)
        for form in forms:
            at = text.find(form)
            while at != -1:
                spans.append((at, at + len(form)))
                at = text.find(form, at + 1)
        if head:  # cut at a limit: its head where a text, line or word ends, its tail where one starts
            at = text.find(head)
            while at != -1:
                end = at + len(head)
                while end < len(text) and end - at < len(secret) and text[end] == secret[end - at]:
                    end += 1
                if end == len(text) or text[end] in _CUT_EDGE:
                    spans.append((at, end))
                at = text.find(head, at + 1)
            at = text.find(tail)
            while at != -1:
                start = at
                back = len(secret) - len(tail)
                while start > 0 and back > 0 and text[start - 1] == secret[back - 1]:
                    start, back = start - 1, back - 1
                if start == 0 or text[start - 1] in _CUT_EDGE:
                    spans.append((start, at + len(tail)))
                at = text.find(tail, at + 1)
    return spans


def redact_text(text: str, secrets: Sequence[str]) -> str:
    """`text` with every stretch covered by a secret (a listed value in any of its forms, or a secret of a known
    format) replaced by [redacted]. Occurrences that overlap (a secret inside another, two that share
    characters) become one [redacted]; adjacent ones stay two."""
    if not text:
        return text
    # too short to hold a secret of a known format: measured without what is [redacted] already, so a text
    # redacted once (and longer for it) is left as it is the second time
    long_enough = len(text) - text.count(REDACTED) * len(REDACTED) >= 12
    spans = _listed_spans(text, secrets) + _pattern_spans(text) if long_enough else _listed_spans(text, secrets)
    if not spans:
        return text
    spans.sort()
    out: list[str] = []
    pos = 0
    start, end = spans[0]
    for a, b in spans[1:]:
        if a < end:  # overlaps the stretch: extend it
            end = max(end, b)
            continue
        out += [text[pos:start], REDACTED]
        pos, (start, end) = end, (a, b)
    out += [text[pos:start], REDACTED, text[end:]]
    return "".join(out)


def redact(value: Any, secrets: Sequence[str]) -> Any:
    """`value` with every secret in its strings (dict keys too, lists and tuples at any depth) redacted; the
    same object when nothing in it is a secret. A loop, not recursion: a payload nested thousands of levels
    deep is walked too."""
    if isinstance(value, str):
        return redact_text(value, secrets)
    if not isinstance(value, dict | list | tuple):
        return value
    stack = [_Frame(value)]
    while True:
        frame = stack[-1]
        if frame.at < len(frame.items):
            key, item = frame.items[frame.at]
            frame.at += 1
            if isinstance(item, dict | list | tuple) and item:
                frame.key = key
                stack.append(_Frame(item))
            else:
                frame.add(key, redact_text(item, secrets) if isinstance(item, str) else item, item, secrets)
            continue
        done = frame.result()
        stack.pop()
        if not stack:
            return done
        stack[-1].add(stack[-1].key, done, frame.container, secrets)


class _Frame:
    """One container being redacted: its items, how far, and what they became."""

    __slots__ = ("at", "changed", "container", "items", "key", "out")

    def __init__(self, container: Any) -> None:
        self.container = container
        self.items: list[tuple[Any, Any]] = (list(container.items()) if isinstance(container, dict)
                                             else [(None, v) for v in container])
        self.at = 0
        self.key: Any = None
        self.out: Any = {} if isinstance(container, dict) else []
        self.changed = isinstance(container, tuple)

    def add(self, key: Any, new: Any, old: Any, secrets: Sequence[str]) -> None:
        self.changed = self.changed or new is not old
        if isinstance(self.out, dict):
            rk = redact_text(key, secrets) if isinstance(key, str) else key
            self.changed = self.changed or rk is not key
            self.out[rk] = new
        else:
            self.out.append(new)

    def result(self) -> Any:
        return self.out if self.changed else self.container


def redact_known(value: Any, more: Iterable[str] = ()) -> Any:
    """`value` redacted of every secret known to this process (and `more`)."""
    secrets = sorted(set(known_secrets()) | set(more), key=lambda s: (-len(s), s))
    return redact(value, secrets)
