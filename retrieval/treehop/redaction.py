"""One redaction rule for every remote client: secrets never reach a result, an error or a log.

Remote servers are not trusted to keep a key to themselves: a 401 page often echoes the bearer
token ("Incorrect API key provided: sk-abc...xyz"), a gateway may reflect request headers into
its body, and an exception chained from httpx may carry a URL with a key in its query string.
Every text that leaves a remote client -- an exception message, a ``rerank_fallback_reason``,
a planner ``fallback_reason``, a session ``summary_fallback_reason`` -- therefore goes through
:func:`redact` first.

The rule, applied in one linear pass per pattern:

1. Every registered secret (each client registers its keys when it is built, see
   :func:`register_secret`) is replaced wherever it appears, also URL-encoded and JSON-escaped.
2. Any token-like run (letters, digits, ``-_.~+/=``) that shares 8 consecutive characters with a
   registered secret is replaced whole, so a truncated or partly masked echo
   (``sk-abcd1234...``) does not leak a usable prefix either.
3. Whatever follows ``Bearer``, ``Authorization:``, ``api_key=``/``"api_key": ...``,
   ``X-Api-Key``, ``X-Security-Token`` and a Volcengine ``Credential=`` is replaced, registered or
   not: a key that was never registered (read by a user's own client) is still hidden. The
   ``api_key`` / ``access_key`` / ``secret_key`` names also at the end of a longer word
   (helper attacks83): ``OPENAI_API_KEY=sk-...`` (an environment line pasted after a
   command, a ``.env`` file quoted in an error), LangChain's ``openai_api_key=`` and
   ``AWS_SECRET_ACCESS_KEY=`` were shown whole, their ``_`` no word boundary.
4. So is the value assigned to a word that *ends* in ``token``, ``secret``, ``password``,
   ``passwd``, ``pwd`` or ``passphrase`` (``token=``, ``access_token = '...'``, ``Pwd=`` of a
   connection string, ``"password": "..."``): an error that quotes a request, a config line
   or a server's echo names its credentials that way. Only an ``=`` or a *quoted* name
   before ``:`` counts, and the name must end there: ``max_tokens=512``, ``token_type=``,
   ``unexpected token: '}'`` and prose are left alone. The name is matched from a word's
   start (its one word boundary) by a lazy run of word characters: each word is scanned
   once, so the pattern stays linear.
5. So is a token in a shape vendors give their keys, named or not (:data:`_VENDOR_KEY`):
   ``sk-...`` (OpenAI, Anthropic ``sk-ant-...``), ``ghp_`` / ``github_pat_`` (GitHub),
   ``hf_`` (Hugging Face), ``xoxb-`` (Slack), ``glpat-`` (GitLab), ``AKIA...`` (AWS key
   ids), ``AIza...`` (Google). Why (stop 72, helper review72): a key pasted as the value
   of an option whose name says nothing (``treehop --limit sk-proj-...``, a key given to
   ``--index`` by mistake) was printed whole in the usage error, and argparse quotes such
   a value in its own "invalid int value: 'sk-...'".

6. A key with something inside it that is no part of it (a zero-width character, a
   quoted-printable soft break, a JSON ``\\u002d``, an URL-encoded ``%2D``, a hard wrap
   before a digit-bearing run) is read joined (:data:`_BREAKS`, :func:`_redact_joined`) and
   masked whole, the break with it (helper attacks88). ``password: 'v'`` (an unquoted
   secret's name, a colon and a quoted value, bare or escaped) is masked too, and so is
   ``access_token: 'v'``; a bare ``token: 'v'`` only for a value of 8+ characters with a
   digit (``unexpected token: '}'`` is a parser's error; helper attacks89). A line break
   before a number or a date is no wrap (:data:`_NOT_A_NUMBER`).

Why a process-wide registry rather than per-client scrubbing: the places that *report* a failure
(the retriever's rerank fallback, the intent analyzer, the session store) do not know which
client's key a message might hold; a message redacted by the wrong client leaks the other's key.
The registry holds only what the clients hold anyway (in the same process memory).

Log lines: httpcore logs response headers at DEBUG level, so :func:`install_log_filter` (run
when :mod:`treehop._http` is imported, i.e. whenever a remote client exists) attaches a
redacting filter to the loggers that can see remote answers.
"""

from __future__ import annotations

import heapq
import json
import logging
import os
import re
import threading
import traceback
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Iterable
from typing import TypeVar
from urllib.parse import quote, quote_plus, unquote_plus, urlsplit

from .bounded_repr import bounded_repr

MASK = "***"
MIN_SECRET_CHARS = 6
"""Shorter values are not registered: masking every ``abc`` in a message would hide the error
without protecting anything (a 5-character key is guessable anyway)."""
WINDOW = 8
"""Length of the shared substring that marks a token as a partial echo of a secret."""

_lock = threading.Lock()
_secrets: set[str] = set()
_windows: set[str] = set()


def _new_lock_in_forked_child() -> None:
    """In a child made by ``os.fork``: a new :data:`_lock`. Why (helper attacks70): a fork
    copies a lock that another thread of the parent held (registering a secret) held for
    good, and the child's first redaction or ``register_secret`` waited for it forever."""
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock_in_forked_child)
_exact: re.Pattern[str] | None = None

_TOKEN = re.compile(r"[A-Za-z0-9\-_.~+/=]{" + str(WINDOW) + ",}")
_USERINFO = re.compile(r"(://)[^/?#\s@]+@")
"""A URL's userinfo, whatever its form: ``user:password@``, ``:password@`` (no user) and
``token@`` (a key given as the user, sent as Basic ``token:``). Why the last two (helper
attacks75): only ``user:password@`` was masked, so httpx's INFO line ("HTTP Request: POST
http://:pw123@host/...") and a server's echo of the URL showed an empty user's short
password and a user-only token whole. Each match starts at a ``://`` and stops at the next
``/``: linear."""
_ESCAPED = (
    r"(?<=\\[abfnrtv])|(?<=\\x[0-9A-Fa-f]{2})|(?<=\\u[0-9A-Fa-f]{4})|(?<=\\U[0-9A-Fa-f]{8})"
    r"|(?<=%[0-9A-Fa-f]{2})"
)
"""Where a word starts right after an escape: Python's ``repr`` and JSON's (``\\n``,
``\\t``, ``\\x00``, ``\\u200b``) and a URL's percent-encoding (``%0A``, ``%20``). Each
alternative has one fixed width: a constant test per position.

Why (helper attacks86): the messages :func:`redact` reads have often escaped the caller's
text already (:func:`shown_name` redacts a ``repr``, the CLI escapes a control character
before it redacts, argparse quotes a value with ``%r``), and an escape ends in a letter or
digit: a key pasted after a newline or a tab (``treehop --limit $'\\nsk-proj-...'``,
``treehop find q --limit $'\\tsk-...'``) was shown as ``\\nsk-proj-...``, the ``n`` read
as part of the token, and printed whole; so was ``Bearer`` after an escaped newline."""


_TOKEN_VALUE_AHEAD = r"(?=[^\s\"',;&\\]{8})(?=[^\s\"',;&\\\d]{0,63}\d)"
"""What a bare ``token: '...'`` 's value must look like to be masked: 8 or more value
characters, a digit among its first 64 (each lookahead reads at most 64 characters).

Why (helper attacks89; attacks88 left ``token: '...'`` as written): ``unexpected token: '}'``
is a parser's error, and its tokens are punctuation or words (``'import'``, ``'EOF'``), but
a credential in a YAML or a repr (``token: 'ghs1x...'``) was shown. A compound name
(``access_token``, ``auth-token``, ``GITHUB_TOKEN``) is no parser's word: its quoted value is
masked as ``password: '...'`` 's is, whatever it holds."""


def _header_value(escaped: bool) -> re.Pattern[str]:
    """:data:`_HEADER_VALUE` (``escaped``: its names also right after an escape,
    :data:`_ESCAPED`) or :data:`_HEADER_VALUE_PLAIN` (only at a word boundary: the same
    matches on a text with no ``\\`` or ``%``, where no escape stands)."""

    def start(word: str) -> str:
        # (the lookahead on the first letter first: the lookbehinds are tried only where
        # the word may start)
        return f"(?={word[0]})(?:\\b|{_ESCAPED}){word}" if escaped else f"\\b{word}"

    return re.compile(
        r"(?i)("
        + start("bearer")
        + r"\s+|"
        + start("authorization")
        + r"\b(?:\\*[\"'])?\s*[:=]\s*(?:\\*[\"'])?(?:[A-Za-z0-9-]+\s+(?=\S))?"
        r"|\b(?:x-)?\w*?api[-_]?key\b(?:\\*[\"'])?\s*[:=]\s*(?:\\*[\"'])?"
        r"|" + start("x-security-token") + r"\b(?:\\*[\"'])?\s*[:=]\s*(?:\\*[\"'])?"
        r"|\b\w*?(?:access|secret)[-_]?key\b(?:\\*[\"'])?\s*[:=]\s*(?:\\*[\"'])?"
        r"|" + start("credential=") + "|" + start("signature=") + r"|\b\w*?"
        r"(?:token|secret|password|passwd|pwd|passphrase)\b"
        r"(?:\\*[\"']\s*:\s*(?:\\*[\"'])?|\s*=\s*(?:\\*[\"'])?)"
        r"|\b\w*?(?:secret|password|passwd|pwd|passphrase|[-_]token)\b[ \t]*:[ \t]*\\*[\"']"
        r"|\btoken\b[ \t]*:[ \t]*\\*[\"']" + _TOKEN_VALUE_AHEAD + ")"
        r"((?:[^\s\"',;&\\]|\\\\|\\(?![\\\"']|r\\n|n[\w-]+[ \t]*:))+)"
    )


_HEADER_VALUE = _header_value(escaped=True)
"""A credential's name (``Bearer``, ``Authorization:``, ``api_key=``, ``token=``, ...) and the
value after it, up to a space, a quote, ``,;&``, a line break, or a line break written as an
escape before the next header (``\\r\\n``, ``\\nName:``). Why the last (helper attacks86):
a request's headers quoted by ``repr`` ran on, the first value masked through the next
header's name, whose own value was then shown: ``X-Security-Token: ***  Basic dXNlcjpwYXNz``.
A backslash otherwise stays in the value (``password=C:\\new\\path`` is masked whole).

A name's quotes may be escaped, once or more (``{\\"password\\": \\"...\\"}``): a JSON body
quoted inside another JSON string (an upstream error's ``detail``, a log line's
``"message"``, ``json.dumps`` of a ``json.dumps``). Why (helper attacks87): the name was read
only with bare quotes, and such a value was shown whole. The value then ends before an
escaped quote (its backslashes read in pairs, so ``\\\\\\"`` ends it too), and a run of
backslashes is read once: linear."""
_HEADER_VALUE_PLAIN = _header_value(escaped=False)
"""The same where no escape stands (:func:`redact` reads it for a text with no ``\\`` or
``%``)."""


_PCT = r"%(?:25)*"
"""A percent sign, itself URL-encoded none or more times (``%``, ``%25``, ``%2525``): what
``%`` reads as once a URL is carried inside another URL's query."""
_ENCODED_VALUE = re.compile(
    r"(?i)((?:\b(?=\w*[%+-])(?:\w*?(?:api[-_]?key|access[-_]?key|secret[-_]?key|token"
    r"|secret|password|passwd|pwd|passphrase|credential|signature|authorization)"
    r"(?:(?:" + _PCT + r"5C)*" + _PCT + r"2[27])?(?:" + _PCT + r"3D|" + _PCT + r"3A)"
    r"|\w*?bearer(?=" + _PCT + r"20|\+))"
    r"|" + _PCT + r"(?:3F|26)[\w.-]*?(?:key|sig|auth|code)" + _PCT + r"3D)"
    r"(?:" + _PCT + r"(?:2[027]|5C)|\+)*(?:(?:bearer|basic|token)(?:" + _PCT + r"20|\+)+)?)"
    r"((?:[^\s%&'\",;\\]|%(?!(?:25)*(?:2[0236Cc]|3[Bb]|0[AaDd]|5[Cc]" + _PCT + r"2[27]))"
    r"[0-9A-Fa-f]{2})+)"
)
"""A credential's name and its value in a URL-encoded text (read only where a text holds a
``%``): ``api_key%3D...``, ``%22password%22%3A%22...``, ``Authorization%3A%20Bearer%20...``,
``bearer%20...``, and a nested query's ``%3Fkey%3D`` / ``%26code%3D`` / ``sig``
(:data:`_SECRET_PARAM`'s names), encoded once or more (``%253D``). The value runs up to an
encoded space, quote, ``&``, ``#``, ``,``, ``;`` or line break.

Why (helper attacks87): a URL carried inside another URL's query (``next=`` /
``redirect_uri=`` of a login redirect, a logged request line) or a form body quoted
encoded writes ``=`` as ``%3D`` and ``&`` as ``%26``: :data:`_SECRET_PARAM` and
:data:`_HEADER_VALUE` read the plain characters only, and ``next=%2Fv1%3Fapi_key%3D...``
showed the key whole. Each name is matched from a word's start (or its ``%3F`` / ``%26``)
by a lazy run of word characters, only for a word followed by ``%``, ``+`` or ``-`` (read
once, up to the first of them: most words are passed over at that one look), and a
``(?:25)*`` reads one run of ``25`` s: linear.

A name's quotes may be escaped before they are encoded (``%5C%22password%5C%22%3A%5C%22``:
a JSON body quoted in a JSON string, then carried in a URL or a form). Why (helper
review74): the name was read with bare encoded quotes only, and such a value was shown
whole, where either escape alone was masked. Each ``%5C`` is one step of a loop that starts
at a ``%``: linear."""
_SK_KEYS = (
    r"sk-(?:proj|ant|svcacct|admin|or)-[A-Za-z0-9_-]{20,}"
    r"|sk-(?=[a-z]*[A-Z0-9])[A-Za-z0-9]{32,}[A-Za-z0-9_-]*"
)
"""The ``sk-`` keys vendors issue, wherever they stand: a vendor's second prefix and 20 key
characters (OpenAI ``sk-proj-`` / ``sk-svcacct-`` / ``sk-admin-``, Anthropic ``sk-ant-``,
OpenRouter ``sk-or-v1-``), or 32 or more letters and digits in one run, not all lowercase
letters (OpenAI's and Moonshot's 48, DeepSeek's and DashScope's 32 hex digits)."""
_SK_SHORT = (
    r"sk-(?=[A-Za-z]*[0-9])[A-Za-z0-9]{20,}[A-Za-z0-9_-]*"
    r"|sk-(?=[A-Za-z0-9_-]{20})(?=[A-Za-z0-9_-]{0,40}[a-z][A-Z])"
    r"(?=[A-Za-z_-]{0,40}[0-9])[A-Za-z0-9_-]+"
)
"""At a token's start also 20 to 31 letters and digits in one run with a digit among them
(a proxy's shorter generated key, ``sk-`` + 22 of ``token_urlsafe``), or 20 or more of
``token_urlsafe``'s alphabet holding a lower-case letter followed by an upper-case one and a
digit (each within its first 42 characters).

Why the second (helper attacks88; leftovers74's open item): ``token_urlsafe`` writes ``-``
and ``_`` among the letters, and a key with one in its first 20 characters (about half of
them: ``1 - (62/64)**22``) was shown whole. A slug's words are one case or capitalised
(``sk-learn-contrib``, ``sk-1234-fix-the-login-redirect``, ``sk-Learn-v2-README``): none
has a lower-case letter followed by an upper-case one; a random 22-character run lacks such
a pair or a digit with odds about 1 in 20 (a CamelCase slug with a digit,
``sk-myFeature2-branch``, is masked). Each lookahead reads at most 42 characters: a run of
``--sk-`` (each ``sk-`` a token start, every character in the lookaheads' classes) read to
its end from each start was quadratic (100,000 characters: 23 s; bounded, 0.1 s)."""

_VENDOR_SHAPES = (
    _SK_KEYS
    + "|"
    + _SK_SHORT
    + r"|(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"
    r"|hf_[A-Za-z0-9]{30,}|xox[abprs]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{20,}"
    r"|AKIA[0-9A-Z]{16}[0-9A-Za-z]*|AIza[0-9A-Za-z_-]{35,}"
)
"""The shapes vendors give their keys, at a token's start. Why the ``sk-`` ones are not
``sk-`` + any 20 of ``[A-Za-z0-9_-]`` (helper leftovers74; leftovers73c's open item): that
shape is an ordinary hyphenated slug's too, and ``sk-learn-contrib-imbalanced-learn``,
``the sk-lookup-table-for-every-case``, ``sk-1234-fix-the-login-redirect`` were masked in
error messages and logs. A key's body is one run of random letters and digits (or follows
its vendor's second prefix); a slug's runs are words."""
_GLUED_SHAPES = (
    _SK_KEYS + r"|(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"
    r"|hf_[A-Za-z0-9]{30,}|xox[abprs]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{20,}"
    r"|AKIA[0-9A-Z]{16}[0-9A-Za-z]*|AIza[0-9A-Za-z_-]{35,}"
)
"""The shapes that are a key wherever they stand, glued to a word before them too: every
shape of :data:`_VENDOR_SHAPES` but the bare ``sk-`` + 20, which a word ending in ``sk``
shares (``task-sk-...``, ``disk-space-monitoring-...``); in its place :data:`_SK_KEYS`
(a vendor's second prefix + 20; 32 or more letters and digits in one run, not all
lowercase letters: the legacy and the many ``sk-<hex>`` keys).

Why (helper leftovers73c; attacks86's open item): a key pasted glued after ``_``, a letter
or a digit (``MY_KEY_sk-proj-...``, ``KEY_ghp_...``, ``xAKIA...``: an environment name and
its value run together, a copy that caught a character before the key) was no token start
and was shown whole. Each of these shapes begins with a fixed prefix and, when it fails,
fails within its prefix and minimum length (the ``sk-`` digit lookahead reads letters
only, up to the next ``-``): a constant test per position, so the scan stays linear.

The ``sk-`` + 32 shape glued after a letter is masked though a word ending in ``sk``
glued to a lower-case hex digest (``task-<md5>``, ``disk-<uuid hex>``: a job's or a file's
name) reads the same: DeepSeek's and DashScope's keys are ``sk-`` + 32 lower-case hex
digits, and a key that caught a letter before it (``xsk-<hex>``) is shown whole otherwise.
A secret shown is worse than a name masked (the lead, stop 74: helper attacks87 required an
upper-case letter after a letter, helper leftovers74's property test showed the DeepSeek key
it let through).

``AKIA`` and ``AIza`` run to the end of their token (``[0-9A-Za-z]*``, ``{35,}``): with one
length and no end, a longer token had its first 20 / 39 characters masked and its tail
shown (attacks86's open item)."""
_VENDOR_KEY = re.compile(
    r"(?=[sghxA])(?:(?:(?<![A-Za-z0-9_])(?<![A-Za-z0-9_]-)|"
    + _ESCAPED
    + r")(?:"
    + _VENDOR_SHAPES
    + ")|"
    + _GLUED_SHAPES
    + ")"
)
"""The shapes vendors give their API keys (a prefix, then a long run of key characters),
matched as a whole token: ``sk-learn`` or ``hf_hub`` are too short to match, and a run must
start the token (no letter, digit, ``_`` or ``-`` before it), so each token is tried once at
its start and the scan stays linear. A token also starts after dashes that start a word
(``--sk-proj-...``: a key pasted as an option, glued to its dashes; not ``task-sk-...``) and
right after an escape (:data:`_ESCAPED`; helper attacks86). The shapes of
:data:`_GLUED_SHAPES` match anywhere (helper leftovers73c)."""
_VENDOR_KEY_PLAIN = re.compile(
    r"(?=[sghxA])(?:(?<![A-Za-z0-9_])(?<![A-Za-z0-9_]-)(?:"
    + _VENDOR_SHAPES
    + ")|"
    + _GLUED_SHAPES
    + ")"
)
"""The same where no escape stands (:func:`redact` reads it for a text with no ``\\`` or
``%``)."""


def register_secret(value: str | None) -> None:
    """Remember a secret so that :func:`redact` hides it from now on (idempotent)."""
    global _exact
    if not isinstance(value, str):
        return
    value = value.strip()
    if len(value) < MIN_SECRET_CHARS:
        return
    # (its folded form too: a tag label is NFKC-normalised and case-folded before an error
    # shows it, so a key pasted as a tag came back lower-cased, past an exact match; helper
    # leftovers65e)
    folded = unicodedata.normalize("NFKC", value).casefold()
    forms = {value, folded, quote(value, safe=""), quote_plus(value), json.dumps(value)[1:-1]}
    with _lock:
        if value in _secrets:
            return
        _secrets.add(value)
        for form in forms:
            _secrets.add(form)
        for text in {value, folded}:
            for i in range(len(text) - WINDOW + 1):
                _windows.add(text[i : i + WINDOW])
        # Longest first, so a secret that contains another is replaced whole.
        ordered = sorted(_secrets, key=len, reverse=True)
        _exact = re.compile("|".join(re.escape(s) for s in ordered))


def _partial(match: re.Match[str]) -> str:
    token = match.group(0)
    windows = _windows
    for i in range(len(token) - WINDOW + 1):
        if token[i : i + WINDOW] in windows:
            return MASK
    return token


def redact(text: object) -> str:
    """``text`` as a string with every secret (registered or recognisable) replaced by ``***``."""
    s = text if isinstance(text, str) else str(text)
    # (first: a key split by a break is masked whole, before its head alone matches a shape)
    s = _redact_joined(s)
    if " " in s and _KEY_PREFIX.search(s) is not None:
        s = _redact_spaced(s)
    exact = _exact
    if exact is not None:
        s = exact.sub(MASK, s)
        if _windows:
            s = _TOKEN.sub(_partial, s)
    s = _USERINFO.sub(r"\1" + MASK + "@", s)
    # A URL's credential-named query parameter (``?key=`` of Google's API keys, ``?code=`` of
    # Azure Functions, a SAS ``sig``), wherever a text quotes the URL: httpx logs every
    # request's URL at INFO ("HTTP Request: POST https://host/v1?key=AIza..."), and the log
    # filter (:class:`RedactingFilter`) redacts with this function.
    s = _SECRET_PARAM.sub(lambda m: f"{m.group(1)}={MASK}", s)
    # (a text with no ``\\`` and no ``%`` holds no escape: the patterns without
    # :data:`_ESCAPED`'s lookbehinds match the same, at about two thirds of the cost)
    escaped = "\\" in s or "%" in s
    s = (_VENDOR_KEY if escaped else _VENDOR_KEY_PLAIN).sub(MASK, s)
    header = _HEADER_VALUE if escaped else _HEADER_VALUE_PLAIN
    s = header.sub(lambda m: m.group(1) + MASK, s)
    if "%" in s:  # (a URL-encoded credential: helper attacks87)
        s = _ENCODED_VALUE.sub(lambda m: m.group(1) + MASK, s)
    return s


_NOT_A_NUMBER = r"(?![0-9]++(?:-[0-9]++)*+(?![A-Za-z0-9_-]))(?![0-9]{4}-[0-9]{2}-[0-9]{2})"
"""Where a line break is read as a wrap inside a key (:data:`_BREAKS`): the next line does not
open with a number, digit groups joined by ``-`` or an ISO date (possessive or fixed-length
lookaheads: each reads the run once, whatever follows)."""
_BREAKS = re.compile(
    r"[\u00ad\u180e\u200b-\u200d\u2060\ufeff]+"
    r"|\\{1,2}(?:u(?:200[B-Db-d]|2060|[Ff][Ee][Ff][Ff]|00[Aa][Dd]|180[Ee])|x[Aa][Dd])"
    r"|\\{1,2}u(00[2-7][0-9A-Fa-f])"
    r"|%(?:25)*(2[Dd]|5[Ff])"
    r"|=(?:\r?\n|(?:\\r)?\\n)"
    r"|(?<=[A-Za-z0-9_-])(?:\r?\n|(?:\\r)?\\n)(?=[A-Za-z0-9_-]{4})(?=[A-Za-z_-]*[0-9])"
    + _NOT_A_NUMBER
)
"""What stands inside a key a user pasted without being part of it: zero-width and soft-hyphen
characters (a chat client's or a word processor's, invisible), a quoted-printable soft line
break (``=`` at a line's end: an e-mail quoted in a ticket), a JSON ``\\u`` escape of an
ASCII character (``sk\\u002dproj-...``: a serializer that escapes ``-``; its
backslash doubled too, as a ``repr`` writes it), an URL-encoded ``-`` / ``_`` (``%2D``,
``%5F``, encoded once or more) and a hard line break inside a token (a terminal's or an
editor's wrap) whose next line starts with 4 or more key characters with a digit among them;
each also as a ``repr`` writes it (``\\u200b``, ``\\xad``, ``=\\n``, ``\\r\\n``).

Why (helper attacks88; attacks87's open item): :data:`_VENDOR_KEY` reads a key as one run of
key characters, and such a key was shown whole (or its tail after the break, the head too
short for the shape). Why only a line break before a digit-bearing run: a key's tail is
random (a 4-character run of it lacks a digit with odds about 1 in 2, a 10-character one
about 1 in 10), while the first word of an ordinary next line (``Next``, ``the``) has none;
joining every line break would mask the next line's first word after each key. Nor before a
number or a date: a next line that opens with a run of digits only, digit groups joined by
``-`` (``2024``, ``555-0100``, ``2024-01-01``) or an ISO date (``2024-01-01T10:00``), as a
log line does. Why (helper attacks89; attacks88's accepted false positive): a key at a line's
end took the next line's date with it (``*** started`` for ``<key>\n2024-01-01 started``);
a key's tail of that shape is about as rare as a tail of four digits ((10/64)^4). Both
lookaheads are possessive or fixed-length: no backtracking into them."""


def _redact_joined(s: str) -> str:
    """``s`` with every key that :func:`redact`'s patterns find once :data:`_BREAKS` are
    taken out (a registered secret, :data:`_VENDOR_KEY`) masked: its whole span in ``s``,
    the break characters inside it too, replaced by one ``***``.

    One pass builds the joined text and a map of its pieces back to ``s``; each match is
    mapped by bisection: linear in ``s`` (a text without a break is returned at once)."""
    if _BREAKS.search(s) is None:
        return s
    parts: list[str] = []
    # (per piece of the joined text: its start there, its start and end in ``s``, and whether
    # it is a copy of ``s``, one joined character per character of ``s``, or a decoded escape)
    view_at: list[int] = []
    orig_at: list[int] = []
    orig_end: list[int] = []
    copied: list[bool] = []
    sum_size = [0]

    def piece(text: str, start: int, end: int, copy: bool) -> None:
        view_at.append(sum_size[0])
        orig_at.append(start)
        orig_end.append(end)
        copied.append(copy)
        parts.append(text)
        sum_size[0] += len(text)

    pos = 0
    for m in _BREAKS.finditer(s):
        if m.start() > pos:
            piece(s[pos : m.start()], pos, m.start(), True)
        code = m.group(1) or m.group(2)
        if code:
            piece(chr(int(code, 16)), m.start(), m.end(), False)
        pos = m.end()
    if pos < len(s):
        piece(s[pos:], pos, len(s), True)
    view = "".join(parts)
    spans: list[tuple[int, int]] = []
    patterns = [_VENDOR_KEY] if _exact is None else [_exact, _VENDOR_KEY]
    for pattern in patterns:
        for m in pattern.finditer(view):
            a = bisect_right(view_at, m.start()) - 1
            b = bisect_right(view_at, m.end() - 1) - 1
            start = orig_at[a] + (m.start() - view_at[a] if copied[a] else 0)
            end = orig_at[b] + (m.end() - view_at[b]) if copied[b] else orig_end[b]
            spans.append((start, end))
    if not spans:
        return s
    spans.sort()
    out: list[str] = []
    pos = 0
    for start, end in spans:
        if end <= pos:
            continue
        out.append(s[pos:start] if start > pos else "")
        if start >= pos:
            out.append(MASK)
        pos = end
    out.append(s[pos:])
    return "".join(out)


_KEY_PREFIX = re.compile(r"sk-|gh[pousr]_|github_pat_|hf_|xox[abprs]-|glpat-|AKIA|AIza")
"""The prefixes of :data:`_VENDOR_SHAPES`: a text without one holds no vendor key to join."""
_KEYLIKE_TAIL = (
    r" (?=[A-Za-z0-9_-]{8})(?=[A-Za-z0-9_-]{0,62}[a-z][A-Z]|[A-Za-z_-]{0,63}[0-9])"
    + _NOT_A_NUMBER
    + r"[A-Za-z0-9_-]++"
)
"""One plain space, then a token that reads like a key's piece: 8 or more key characters,
a digit or a lower-case letter followed by an upper-case one (each within its first 64
characters), not a number or a date (:data:`_NOT_A_NUMBER`). A word of prose has none of
these (``the``, ``Next``, ``IMPORTANT``; ``user42`` and ``v10`` are under 8;
``2024-01-01`` is a date); a CamelCase word of 8 or more (``JavaScript``) has, and is
joined only after a key-like head (:func:`_keylike_head`) into a vendor's shape."""
_SPACED = re.compile(
    r"(?<![A-Za-z0-9_-])(?>[A-Za-z0-9_-]*?(?:" + _KEY_PREFIX.pattern + r"))[A-Za-z0-9_-]*+"
    r"(?:" + _KEYLIKE_TAIL + r")+"
)
"""A token holding a vendor prefix, then one or more key-like tokens (:data:`_KEYLIKE_TAIL`),
each after one plain space: the candidates :func:`_redact_spaced` joins. The head is read
from a token's start up to its first prefix once (an atomic group: a token of many prefixes,
``sk-sk-sk-...``, is not read again from each), then to its end; each tail's lookaheads read
at most 64 characters: linear."""
_SPACED_CONTEXT = 10
"""Characters before a candidate given to :data:`_VENDOR_KEY` with it: an escape that
starts its token (``\\nsk-...``, ``\\u200bsk-...``: :data:`_ESCAPED`) is read there."""


_SECOND_PREFIX = re.compile(r"(?:proj|svcacct|admin|ant(?:-api[0-9]{2})?|or(?:-v[0-9])?)-")
"""What follows ``sk-`` in a vendor's second prefix (OpenAI's, Anthropic's, OpenRouter's)."""
_KEY_CASE = re.compile(r"[0-9A-Z]")
_SLUG = re.compile(r"[-_]*+(?:[a-z]++|[0-9]++)(?:[-_]++(?:[a-z]++|[0-9]++))*+[-_]*+")
"""A slug's words: runs of lower-case letters or of digits, joined by ``-`` / ``_``."""
_DIGIT_GROUPS = re.compile(r"[0-9]++(?:-[0-9]++)*+-?")
"""Digit groups joined by ``-`` (a Slack token's first groups, ``68579351-886``), the last
``-`` too (split right after it)."""


def _keylike_head(head: str) -> bool:
    """Whether ``head`` (a token holding a vendor prefix) reads like a key's first piece: what
    follows its prefix (and ``sk-`` 's second prefix) is nothing, or holds a digit or an
    upper-case letter (within 64 characters) and is no slug (:data:`_SLUG`: every run
    between ``-`` / ``_`` all lower-case letters or all digits). A slug is not joined with
    the next word (``sk-learn``, ``hf_hub``, ``disk-space``, ``sk-1234-fix``: ``sk-1234-fix
    GridSearchCV`` read joined has a lower-case letter followed by an upper-case one and a
    digit, :data:`_SK_SHORT` 's second form).

    Digits only after the prefix (:data:`_DIGIT_GROUPS`: ``sk-28``, ``ghp_7``, ``AKIA1234``,
    ``xoxb-68579351``) read as a key's piece, no slug. Why (helper review78b): a key split
    a few characters after its prefix often has only digits there (a DeepSeek key's hex, a
    Slack token's first groups: 157 of 259 Slack tokens split in their digit groups), and
    the slug rule refused the join, so the tail after the space (up to all but one or two
    of the key's characters) was shown whole; no prose word is a vendor prefix and digits
    (``sk-1234-fix`` has a word: still a slug)."""
    at = _prefix_end(head)
    if at is None:
        return False
    if at == len(head) or _DIGIT_GROUPS.fullmatch(head, at) is not None:
        return True
    return _KEY_CASE.search(head, at, at + 64) is not None and not _SLUG.fullmatch(head, at)


def _prefix_end(head: str) -> int | None:
    """Where ``head`` 's vendor prefix (with ``sk-`` 's second prefix) ends; None without one."""
    found = _KEY_PREFIX.search(head)
    if found is None:
        return None
    at = found.end()
    if found.group(0) == "sk-":
        second = _SECOND_PREFIX.match(head, at)
        at = second.end() if second else at
    return at


def _redact_spaced(s: str) -> str:
    """``s`` with every vendor key split by plain spaces masked whole: a token holding a
    vendor prefix and the key-like tokens after it (:data:`_SPACED`) are read joined, and
    where :data:`_VENDOR_KEY` matches across a join the span from the match's start to the
    end of the token it ends in is replaced by one ``***``.

    Why (helper attacks90; attacks89 left it): a key pasted into a chat, a form or a
    terminal often comes back with a space in it (a word wrap undone, a copy across two
    cells, ``sk-proj-Ab3d... Xy9z...``), and its head was masked (or not, when shorter than
    its shape) while the tail after the space was shown whole. The rule: both sides of the
    space must look like a key's pieces, the head by its vendor prefix, the tail by
    :data:`_KEYLIKE_TAIL` (and :func:`_keylike_head`: a digit or an upper-case letter after
    its prefix), and the two joined must be a vendor's shape: ordinary text has
    no vendor prefix, and a word after a key (``for``, ``user42``, ``v10``, ``Next``) is no
    key-like tail. A piece of under 8 characters after the space stays shown (at most 7 of
    the key's characters: not a usable key)."""
    out: list[str] = []
    pos = 0
    for m in _SPACED.finditer(s):
        pieces = m.group(0).split(" ")
        starts: list[int] = []  # (where each piece starts in ``s``)
        at = m.start()
        for p in pieces:
            starts.append(at)
            at += len(p) + 1
        # (the groups joined: each from a key-like head (:func:`_keylike_head`) to the next
        # head that opens its piece with a vendor prefix, or that stands after the group's
        # end; a piece with a prefix inside it, ``00000000-AKIA...``, stays a tail of the
        # group it is in)
        groups: list[list[int]] = []
        cover = 0
        for i, p in enumerate(pieces):
            if not _keylike_head(p):
                continue
            if groups and i < cover and _KEY_PREFIX.match(p) is None:
                continue
            if groups:
                groups[-1][1] = min(groups[-1][1], i)
            # (a bare prefix, ``AIza`` / ``sk-``, carries no key character of its own: it is
            # joined with the one piece after it only, which must complete the shape alone;
            # a run of CamelCase words after a bare ``AIza`` is prose, not a key's pieces)
            cover = i + 2 if _prefix_end(p) == len(p) else len(pieces)
            groups.append([i, cover])
        for i, stop in groups:
            if stop - i < 2:
                continue
            span = _spaced_span(s, pieces[i:stop], starts[i])
            if span is None:
                continue
            start, end = span
            out.append(s[pos : max(start, pos)])
            out.append(MASK)
            pos = max(end, pos)
    if not out:
        return s
    out.append(s[pos:])
    return "".join(out)


_TOKEN_START = re.compile(r"(?:(?<![A-Za-z0-9_])(?<![A-Za-z0-9_]-)|" + _ESCAPED + ")")
"""Where :data:`_VENDOR_KEY` 's token-start shapes may match (no letter, digit, ``_`` or
``word-`` before; or right after an escape: ``\\nsk-...``, whose ``n`` is a letter)."""


def _spaced_span(s: str, pieces: list[str], first: int) -> tuple[int, int] | None:
    """The span of ``s`` to mask for ``pieces`` (a key-like head and the key-like tails after
    it, each after one space, the head at ``first``): from the start of the first
    :data:`_VENDOR_KEY` match across a join to the end of the piece the last one ends in;
    ``None`` where no match crosses a join.

    Each call reads its pieces once (and :data:`_SPACED_CONTEXT` characters before them), and
    :func:`_redact_spaced` gives each piece to one call: linear. Why one group per key-like
    head (helper review78b): a match whose head was refused (``sk-learn``, a slug) or joined
    with one piece only (a bare ``AIza``) skipped the rest of it, so a key split once after
    two such words (``sk-learn Version2 ghp_Ab12... 5678...``, ``disk-Usage2024 sk-Ab3...
    Ij9...``) was shown whole."""
    lead = max(0, first - _SPACED_CONTEXT)
    off = first - lead
    view = s[lead:first] + "".join(pieces)
    # (where each piece ends in the view, and in ``s``)
    ends_view: list[int] = []
    ends_s: list[int] = []
    at_view, at_s = off, first
    for p in pieces:
        at_view += len(p)
        at_s += len(p)
        ends_view.append(at_view)
        ends_s.append(at_s)
        at_s += 1
    joins = ends_view[:-1]
    start = end = -1
    for k in _VENDOR_KEY.finditer(view):
        # (the first join after the match's start: inside the match or not; bisection, not a
        # walk over every join)
        j = bisect_right(joins, k.start())
        if j == len(joins) or joins[j] >= k.end():
            continue
        if (
            view.startswith("sk-", k.start())
            and (view[k.start() - 1 : k.start()].isalpha() or view[k.start() - 1] == "-")
            and _TOKEN_START.match(view, k.start()) is None
            and _SECOND_PREFIX.match(view, k.start() + 3) is None
        ):
            # (``sk-`` ending a word or after a word's ``-``, ``flask-SQLAlchemy``,
            # ``risk-Score2024``, ``task-sk-Runner``: joined across spaces, CamelCase words and
            # hashes after it make the glued ``sk-`` + 32; after ``_`` or a digit, or with a
            # vendor's second prefix, ``MY_KEY_sk-...``, ``x-sk-proj-...``, a key still)
            continue
        if start < 0:
            a = bisect_right(ends_view, k.start())  # (the piece the match starts in)
            if k.start() < off:  # (in the context before the candidate)
                start = lead + k.start()
            elif a == 0:
                start = first + k.start() - off
            else:
                start = ends_s[a - 1] + 1 + k.start() - ends_view[a - 1]
        end = ends_s[bisect_right(ends_view, k.end() - 1)]  # (its piece's end)
    return None if start < 0 else (start, end)


_USERINFO_END = frozenset("/ \t\r\n\"'")
"""Where a URL's userinfo starts, read back from its ``@``: after a slash, a space or a
quote (or at the start)."""


_SECRET_PARAM = re.compile(
    r"(?i)([?&;][a-z0-9_.-]*?"
    r"(?:key|token|sig|signature|secret|password|passwd|pwd|auth|credential|code)"
    r")=([^&#\s'\"]+)"
)
"""A query parameter of a URL whose name says it is a credential (``?key=`` of Google's API
keys, ``token``, ``access_token``, a SAS ``sig``, ``password``): its value is masked by
:func:`redact_url`. Each match starts at a ``?``, ``&`` or ``;``: linear."""
_FRAGMENT = re.compile(r"#[^\s'\"]+")


def register_url_secrets(url: object) -> None:
    """Register the credentials a configured URL carries (:func:`register_secret`): the
    password of ``user:password@`` and each credential-named query parameter's value
    (:data:`_SECRET_PARAM`: ``?key=``, ``?code=``, a SAS ``sig``), as written and decoded.
    Why: the URL itself is shown through :func:`redact_url`, but a server that echoes the
    key it was sent ("API key not valid: AIza...", a 401 quoting the query) put it into the
    client's error, where only registered secrets are recognised."""
    if not isinstance(url, str):
        return
    for m in _SECRET_PARAM.finditer(url):
        register_secret(m.group(2))
        register_secret(unquote_plus(m.group(2)))
    try:
        parts = urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:  # (an invalid IPv6 host, a bad port: the request will say so)
        return
    # A user with no password is a token given as the user (``https://<key>@host``: httpx
    # sends it as Basic ``<key>:``), a credential as a password is (helper attacks75).
    for secret in (password,) if password else (user,):
        if secret:
            register_secret(secret)
            register_secret(unquote_plus(secret))


def redact_url(url: object) -> str:
    """``url`` redacted (:func:`redact`) and with whatever stands before an ``@`` in its
    segment replaced by ``***``: ``https://user:password@host`` and the malformed forms an
    error message echoes (``//user:pw@h``, ``http//user:pw@h``, ``user:pw@h``) that
    :func:`redact`'s ``scheme://user:pw@`` pattern does not see. For an error, a repr or a
    name: a URL written by a caller may carry credentials. Each character is read once
    (a scan back from each ``@`` stops at the one before): linear on any text.

    Query parameters named as credentials (:data:`_SECRET_PARAM`) and a fragment (never
    sent to a server: only a secret would be put there) are masked too; they were shown
    whole in the clients' ``repr`` and a reranker's name."""
    s = _SECRET_PARAM.sub(lambda m: f"{m.group(1)}={MASK}", redact(url))
    s = _FRAGMENT.sub("#" + MASK, s)
    if "@" not in s:
        return s
    parts = s.split("@")
    for k in range(len(parts) - 1):
        p = parts[k]
        i = len(p)
        while i > 0 and p[i - 1] not in _USERINFO_END:
            i -= 1
        parts[k] = p[:i] + MASK if i < len(p) else p
    return "@".join(parts)


def redact_exception(exc: BaseException) -> str:
    """``"TypeName: message"`` of an exception, redacted (for fallback reasons)."""
    return redact(f"{type(exc).__name__}: {exc}")


_N = TypeVar("_N")
LISTED_NAMES = 5
"""How many names of the caller's input an error lists before "and N more"."""
NAME_CHARS = 60
"""How many characters of each listed name an error shows."""
MODEL_NAME_CHARS = 200
"""How many characters of an embedder's name an error shows (:func:`shown_name`). Why a
bound (helper attacks85): the name an index was built with is read from its manifest, and a
200,000-character one was echoed whole by "would mix vector spaces" and by the CLI's
``_BuiltWith`` (an MCP tool's answer)."""


def shown_name(name: object, limit: int = NAME_CHARS) -> str:
    """One name of the caller's input (a keyword, a filter key, a URI) as an error shows it:
    its text cut to ``limit`` characters (``...`` after a cut, inside the quotes), as a repr
    (control, bidi and lone surrogate characters escaped), redacted (a registered key given
    as a name is masked, a partial echo too). The one form for the core and the framework
    adapters (:mod:`treehop.integration_kit` re-exports it).

    Why: a name is the caller's text as a value is (helper attacks71): a registered key given
    as a keyword's name (``**{key: ...}``) was echoed whole, a megabyte name too, and a
    newline in one printed a line of its own. Cut before it is escaped, so the work is
    bounded by ``limit`` whatever the name's length. Why one function (helper leftovers64):
    the adapters had their own copy (the repr cut to 100 characters), so the same unknown
    name read differently in ``find``'s error and in a LangChain retriever's."""
    text = _name_text(name, limit)
    return redact(repr(cut_text(text, limit)))


KEY_RUN = 48
"""More characters than any :data:`_VENDOR_KEY` shape needs to match (``github_pat_`` and 30,
41; ``AIza`` and 35, 39): how far around a cut :func:`cut_text` looks for a key."""


def cut_text(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, ``...`` after a cut; a key in a vendor's shape
    (:data:`_VENDOR_KEY`) that the cut runs through is masked whole (``***...``).

    Why (helper attacks86): a message shows the caller's text cut (a name to 60 characters,
    a command line's argument to 100), and a cut a few characters into a key left a prefix
    too short for the key's shape (``sk-proj-A1b2C3d4E5...``: 8 + 10 characters), which
    :func:`redact` then showed: up to 19 of the key's own characters, where a registered
    key's partial echo is masked from 8 (:data:`WINDOW`). Reads at most ``2 * KEY_RUN``
    characters around the cut, whatever the text's length."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    for m in _VENDOR_KEY.finditer(text, max(0, limit - KEY_RUN), limit + KEY_RUN):
        if m.start() < limit < m.end():
            head = text[: m.start()] + MASK
            break
    return head + "..."


_REPR_STRS = (object.__str__, bytes.__str__, bytearray.__str__)
"""The ``__str__`` s that write what ``repr`` writes (bytes' warn only under ``python -b``)."""


def _name_text(name: object, limit: int) -> str:
    """``str(name)``, at least its first ``limit`` characters (it may run on past them).

    A name that is no string is most often a tuple (a hashable key of a filter dict), whose
    ``str`` is its ``repr``: built by :func:`treehop.bounded_repr.bounded_repr`, only as
    far as shown.
    Why (helper attacks78): ``str()`` of a 5-million-item tuple key wrote its whole 39 MB
    text (0.3 s) for a 60-character name, and :func:`first_few` did so for every name given.
    A ``__str__`` that raises gives ``<TypeName>``."""
    if isinstance(name, str):
        return name
    try:
        if type(name).__str__ in _REPR_STRS:  # (``str`` is ``repr``: bounded)
            return bounded_repr(name, limit + 1)
        return str(name)
    except Exception:  # (a key whose __str__ / __repr__ raises)
        return f"<{type(name).__name__}>"


def listed(
    names: Iterable[object], show: Callable[[object], str] | None = None, first: int = LISTED_NAMES
) -> str:
    """Names of the caller's input (unknown keywords, filter keys, ...) for an error:
    at most ``first`` of them, the smallest by their text (so the message does not depend
    on a set's order), each through ``show`` (default :func:`shown_name`), then
    ``and N more``.

    Why (helper leftovers63): ``find(q, **kwargs)`` with 20,000 unknown keywords raised a
    0.7 MB message listing them all (a framework's ``search_kwargs`` built at run time, a
    hostile caller); an agent or a log then carried the whole of it. Linear in the names
    (:func:`heapq.nsmallest`), each name cut before it is escaped and redacted."""
    head, more = first_few(names, first)
    text = ", ".join((show or shown_name)(n) for n in head)
    return f"{text} and {more} more" if more else text


def first_few(names: Iterable[_N], first: int = LISTED_NAMES) -> tuple[list[_N], int]:
    """The ``first`` smallest of ``names`` by their text (sorted), and how many are left
    out: what :func:`listed` shows, for a caller that adds a hint to each shown name (a
    "did you mean", computed for these few only)."""
    items = list(names)

    def key(n: object) -> str:
        return _name_text(n, NAME_CHARS)[: NAME_CHARS + 1]

    head = heapq.nsmallest(first, items, key=key)
    return head, len(items) - len(head)


def registered_count() -> int:
    """How many secret forms are registered (for tests and diagnostics; never the values)."""
    with _lock:
        return len(_secrets)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts a record's formatted message (never drops a record).

    httpcore logs response headers at DEBUG level; a server that echoes the bearer token in a
    header would otherwise put the key in any application log that has DEBUG on.


    A record's traceback is redacted too: where its text holds a secret, the redacted text
    goes into the message and the exception leaves the record (a handler would print it
    again from ``exc_info``, as the ``mcp`` SDK's ``RichHandler`` does, frame by frame).
    Why (helper attacks89): ``treehop mcp`` logged a ``prompts/get`` for an unknown name with
    the SDK's traceback, whose ``ValueError: Unknown prompt: <name>`` showed a key given as
    the name whole on stderr, the client's server log.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: leave it to the logging machinery
            return True
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and record.exc_info[1] is not None:
            try:
                trace = "".join(traceback.format_exception(*record.exc_info))
            except Exception:  # (an exception whose str raises: the handler's own problem)
                return True
            shown = redact(trace)
            if shown != trace:
                record.msg, record.args = f"{clean}\n{shown.rstrip()}", None
                record.exc_info, record.exc_text = None, None
        return True


LOGGERS = (
    "treehop",
    "httpx",
    "httpcore",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
    "httpcore.socks",
    "urllib3.connectionpool",
)
"""Loggers that can see remote answers: filters do not propagate to child loggers, so every
logger that emits records is named."""

_installed = False


def install_log_filter() -> None:
    """Attach one :class:`RedactingFilter` to each of :data:`LOGGERS` (idempotent)."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
    flt = RedactingFilter()
    for name in LOGGERS:
        logging.getLogger(name).addFilter(flt)
