"""Query shape: is a query a question someone wrote, or a keyword / heading-shaped query?

Why it matters: the fusion of dense and lexical (BM25) scores and the section-heading term
were chosen on query sets built from a corpus's own headings, first sentences and anchor texts,
whose words are the document's words. A question a person writes shares few words with its
answer; there a chunk that repeats the question's words (BM25) or whose heading names them
outranked the answer that the dense score put well ahead (issue 33: a chunk at dense 0.48,
hybrid 0.74 beat the answer at dense 0.71, hybrid 0.71). The retriever reads the shape to
weigh those terms per query (:class:`~treehop.config.RetrievalConfig`, ``question_*``).

The rule reads the query's surface only (its end and its first word), in linear time, so it
holds for any corpus: a question mark at the end, or a first word that opens an English
question (an interrogative or an auxiliary verb) followed by at least two more words. "How
to ..." and "When to ..." open a guide's title, "Do not ..." an instruction, and "When X,
..." a statement's clause: none is a question.

A problem report in the first person singular ("I can't log in. When I enter ...", "My
admin-site CSS is not displaying", "I'm on Windows and ...") of at least four words asks for
an answer just as a question does: 4 of Django's 53 FAQ entries and 3 of gitfaq's 20 are
such reports without a question mark, while documentation headings, first sentences and
link texts almost never open with "I" or "my" (3 of 1,436 derived queries in
``bench/data``). "We ..." is left out: documentation says "We recommend ...".

A statement written as a sentence (:func:`is_sentence`: it ends with a full stop or an
exclamation mark and has at least three words) is a problem report in the third person
("Fetchmail hangs while fetching mail.", "Some objects aren't appearing in the admin.") or a
request ("papers on shock-sound wave interaction ."): its answer is one passage of a page,
as a question's is, so it takes passage slots too; headings, keywords and link texts end
without a stop. Its fusion and tree terms stay those of other queries: a sentence is also
what a first-sentence query is, whose words are the page's own (the config's
``sentence_passages`` says what each part was measured to do).

Leading discourse words ("But I've reminded you ...", "So how do I ...", "Hi, can I ...",
"OK, why does ...") are skipped before those first-word rules (at most
``MAX_DISCOURSE_WORDS``): they open a turn of speech, not a heading, and carry no shape of
their own, so "But" must not hide the question or report behind it. The list is closed and
small (conjunctions, interjections and greetings that open spoken or written English turns);
words that also open instructions or statements ("Then", "Now", "Please", "Yes", "No") are
left out, so a heading that starts with one keeps its shape.

Reports that carry no question shape (:func:`is_error_report`, :func:`is_problem_report`):
people who write to an FAQ or a search box often paste the error they got ("fatal: unable to
access ...", "ImportError: No module named yaml", "I get `Permission denied` when I push")
or state what fails ("fetchmail hangs after the greeting", "my mails are not delivered")
without a question mark or a question word. Both ask for the passage that explains and fixes
it. The readers are built from general English phrasing of failure and from the shapes tools
print (a label before a colon, an exception class, POSIX error names, quoted messages), not
from any set's wording; headings, link texts and first sentences almost never take those
shapes (none of the 1,436 derived queries in ``bench/data`` is read as an error report, and
of those not already a question or a sentence only two of Django's link texts, which are
problem reports, are read as such: "Some objects aren't appearing in the admin", "your
message does not appear").
Both read a bounded head with ``str`` methods only, so they are linear in a constant.
"""

from __future__ import annotations

QUESTION_WORDS = frozenset(
    {
        "how",
        "what",
        "why",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "is",
        "are",
        "was",
        "were",
        "do",
        "does",
        "did",
        "has",
        "have",
        "had",
        "can't",
        "don't",
        "doesn't",
        "isn't",
        "aren't",
        "won't",
        "wouldn't",
        "shouldn't",
        "couldn't",
        "didn't",
    }
)
"""First words that open an English question."""
QUESTION_MARKS = ("?", "？", "¿")
CLAUSE_WORDS = frozenset({"when", "where", "while"})
"""First words that also open a clause of a statement ("When using X, do Y.")."""
FIRST_PERSON = frozenset({"i", "i'm", "i've", "i'd", "i'll", "my"})
"""First words of a problem report written in the first person singular."""
DISCOURSE_WORDS = frozenset(
    {"but", "and", "so", "well", "ok", "okay", "also", "hi", "hello", "hey", "oh", "anyway"}
)
"""Words that open a turn of speech and are skipped before the first-word rules."""
MAX_DISCOURSE_WORDS = 2
"""At most this many leading discourse words are skipped ("Hi, so why ...")."""
_WORD_PUNCT = "\"'(,.!:;-\u2014\u2013"
PROBLEM_MIN_WORDS = 4
"""A first-person problem report has at least this many words ("My First Blueprint" is a
title)."""


def is_question(query: str) -> bool:
    """Whether ``query`` is shaped as a question (see the module docstring)."""
    text = query.strip()
    if not text:
        return False
    if text.endswith(QUESTION_MARKS):
        return True
    words = text[:200].split(None, PROBLEM_MIN_WORDS + MAX_DISCOURSE_WORDS)
    skip = 0
    while (
        skip < MAX_DISCOURSE_WORDS
        and len(words) > skip + 1
        and words[skip].lower().strip(_WORD_PUNCT) in DISCOURSE_WORDS
    ):
        skip += 1
    words = words[skip:]
    if len(words) < 3:
        return False
    first = words[0].lower().strip("\"'(").replace("\u2019", "'")
    if first in FIRST_PERSON:
        return len(words) >= PROBLEM_MIN_WORDS  # a problem report: "I can't log in ..."
    second = words[1].lower()
    if first not in QUESTION_WORDS or second == "to" or (first == "do" and second == "not"):
        return False  # "How to ...", "When to ...": a guide's title; "Do not ...": an order
    # "When using X, ...": a sentence that opens with a clause, not a question
    return not (first in CLAUSE_WORDS and "," in text)


SENTENCE_ENDS = (".", "!", "\u3002", "\uff01")
"""Marks that end a sentence (also the ideographic full stop and exclamation mark)."""
_CLOSERS = "\"')]\u201d\u2019\u00bb \t\r\n"
"""Closing quotes and brackets a sentence may end with after its mark (``He said "no."``)."""
SENTENCE_MIN_WORDS = 3
"""A sentence has at least this many words ("Perl Books." is a title; "etc." an
abbreviation); one that ends with an ideographic mark (no spaces between its words), at
least this many characters before the mark."""


def is_sentence(query: str) -> bool:
    """Whether ``query`` is written as a sentence: it ends with a full stop or an exclamation
    mark (closing quotes and brackets after it allowed) and has at least
    :data:`SENTENCE_MIN_WORDS` words. A question is not a sentence here
    (:func:`is_question` reads it); an ellipsis (``...``) is a cut phrase, not a stop. Linear
    in the query's length (only its end and its first words are read)."""
    text = query.strip().rstrip(_CLOSERS)
    if not text.endswith(SENTENCE_ENDS) or text.endswith(".."):
        return False
    if text.endswith(("\u3002", "\uff01")):
        return len(text) > SENTENCE_MIN_WORDS
    return len(text[:400].split(None, SENTENCE_MIN_WORDS)) >= SENTENCE_MIN_WORDS


def is_title(query: str) -> bool:
    """Whether ``query`` has none of the shapes the other readers know: not a question, a
    sentence, an error report or a problem report (a title, a noun phrase, a keyword query
    or a command without a stop: "Disclaimer and copyright", "Using X with Y"). Linear in
    the query's length (each reader reads a bounded head or the end)."""
    return bool(query.strip()) and not (
        is_question(query)
        or is_sentence(query)
        or is_error_report(query)
        or is_problem_report(query)
    )


# --------------------------------------------------------------------------- reports
REPORT_HEAD_CHARS = 2000
"""Only this many leading characters are read for a report's markers: a pasted message or a
problem statement names itself early, and the bound keeps every check linear in a constant."""
REPORT_HEAD_WORDS = 80
"""At most this many leading words are read for the word rules."""
_QUOTE_STRIP = "\"'`\u201c\u201d\u2018\u2019\u00ab\u00bb()[]{}<>,.;!?*"
"""Quotes, brackets and punctuation stripped from a word's ends before it is compared."""

ERROR_LABELS = frozenset(
    {"error", "fatal", "panic", "exception", "traceback", "failure", "critical", "err"}
)
"""Labels a tool prints before its message (``fatal: unable to access ...``, ``Error: ...``,
``ERROR: ...``): such a word directly followed by a colon marks a pasted message."""
TOOL_WARNING = "warning:"
"""``warning:`` marks a pasted message only in a tool's lower case (``warning: LF will be
replaced by CRLF``); ``Warning:`` opens a documentation admonition's first sentence."""
ERROR_CLASS_SUFFIXES = ("Error", "Exception", "Warning", "Fault", "Failure")
"""An exception or error class's name ends with one of these (``ImportError``,
``java.lang.NullPointerException``, ``DeprecationWarning``); followed by a colon it is the
first line of a traceback's message."""
ERRNO_NAMES = frozenset(
    {
        "EACCES",
        "EADDRINUSE",
        "EAGAIN",
        "EBADF",
        "EBUSY",
        "ECONNABORTED",
        "ECONNREFUSED",
        "ECONNRESET",
        "EEXIST",
        "EHOSTUNREACH",
        "EINTR",
        "EINVAL",
        "EIO",
        "EISDIR",
        "ELOOP",
        "EMFILE",
        "ENAMETOOLONG",
        "ENETUNREACH",
        "ENOENT",
        "ENOEXEC",
        "ENOMEM",
        "ENOSPC",
        "ENOSYS",
        "ENOTCONN",
        "ENOTDIR",
        "ENOTEMPTY",
        "ENOTSUP",
        "EOPNOTSUPP",
        "EPERM",
        "EPIPE",
        "EPROTO",
        "EROFS",
        "ESRCH",
        "ETIMEDOUT",
        "EXDEV",
    }
)
"""POSIX error names (``errno.h``) a system call's failure prints."""
ERROR_PHRASES = (
    "traceback (most recent call last)",
    "[errno",
    "errno=",
    "permission denied",
    "access denied",
    "no such file or directory",
    "command not found",
    "connection refused",
    "connection reset by peer",
    "segmentation fault",
    "core dumped",
    "no module named",
    "undefined reference to",
    "returned non-zero",
)
"""Messages of operating systems, shells, linkers and interpreters that users paste without
quotes (lower case; read in the lower-cased head). None names a documentation topic."""
NUMBERED_PHRASES = ("exit status ", "exit code ", "errno ", "error code ")
"""Phrases that mark a message only when a number follows (``exit status 128``, ``errno
13``): without one they name a topic (Python's ``errno`` module, a tool's "Exit codes")."""
ERROR_SPAN_MIN_WORDS = 2
"""A quoted span is a message only with at least this many words: one quoted word is a
literal (a log level ``"error"``, an option value ``"no"``)."""
ERROR_WORDS = frozenset(
    {
        "error",
        "errors",
        "fatal",
        "failed",
        "failure",
        "fails",
        "denied",
        "refused",
        "unable",
        "cannot",
        "can't",
        "couldn't",
        "invalid",
        "illegal",
        "unknown",
        "unexpected",
        "undefined",
        "missing",
        "exception",
        "traceback",
        "abort",
        "aborted",
        "panic",
        "segmentation",
        "unrecognized",
        "unrecognised",
        "unsupported",
        "forbidden",
        "unauthorized",
        "rejected",
        "declined",
        "expired",
        "unreachable",
        "killed",
        "terminated",
        "timeout",
        "warning",
        "corrupt",
        "corrupted",
        "mismatch",
        "violation",
        "not",
        "no",
    }
)
"""Words that make a quoted or code span a message of failure (``"Permission denied
(publickey)"``, `` `fatal: not a git repository` ``); a quoted span without one is a name
or a literal (```--force```, ``"settings.py"``)."""
ERROR_NOUNS = frozenset(
    {
        "error",
        "errors",
        "exception",
        "exceptions",
        "traceback",
        "warning",
        "warnings",
        "segfault",
        "panic",
        "crash",
    }
)
"""What a user reports receiving (``I get a strange error``)."""
RECEIVE_VERBS = frozenset(
    {
        "get",
        "got",
        "getting",
        "see",
        "saw",
        "seeing",
        "receive",
        "received",
        "receiving",
        "encounter",
        "encountered",
        "encountering",
        "hit",
        "have",
        "having",
    }
)
"""Verbs of receiving a message, read after a first-person subject (``I get``, ``we're
getting``) or as a report's first word (``Getting an error when ...``)."""
REPORT_SUBJECTS = frozenset({"i", "i'm", "im", "i've", "i'd", "we", "we're", "we've", "keep"})
"""Subjects (and ``keep``, as in ``I keep getting``) after which a receiving verb reports."""
RECEIVE_SPAN = 8
"""A received error noun lies at most this many words after its verb."""


def _words(text: str) -> list[str]:
    """The head's words, lower-cased, apostrophes normalised and quotes stripped."""
    head = text[:REPORT_HEAD_CHARS].replace("\u2019", "'").lower()
    return [w.strip(_QUOTE_STRIP) for w in head.split(None, REPORT_HEAD_WORDS)[:REPORT_HEAD_WORDS]]


def _quoted_spans(head: str) -> list[str]:
    """Text inside backticks or double quotes (straight, curly or guillemets) in ``head``;
    an unclosed quote opens no span. One pass per quote kind, linear in ``head``."""
    spans: list[str] = []
    for mark in ("`", '"'):
        spans.extend(head.split(mark)[1:-1:2])
    for opening, closing in (("\u201c", "\u201d"), ("\u00ab", "\u00bb")):
        start = head.find(opening)
        while start >= 0:
            end = head.find(closing, start + 1)
            if end < 0:
                break
            spans.append(head[start + 1 : end])
            start = head.find(opening, end + 1)
    return spans


def _error_class(token: str) -> bool:
    """Whether ``token`` (original case, stripped) names an error or exception class:
    ``ImportError``, ``java.io.IOException``, ``DeprecationWarning`` (not ``Error`` or
    ``Warning`` alone: a label, read by :data:`ERROR_LABELS`)."""
    name = token.rsplit(".", 1)[-1]
    for suffix in ERROR_CLASS_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)].isalnum() and name[0].isupper()
    return False


def is_error_report(query: str) -> bool:
    """Whether ``query`` reports an error message: it quotes a message of failure (text in
    backticks or quotes holding a word of :data:`ERROR_WORDS`), pastes one (a label such as
    ``fatal:`` or ``Error:``, an exception class followed by a colon, a POSIX error name or
    one of :data:`ERROR_PHRASES`), or says it receives one (``I get ... error``, ``Getting an
    exception when ...``). Such a query asks for the cause and the fix, as a question does,
    though it may carry no question mark or question word. Reads only the first
    :data:`REPORT_HEAD_CHARS` characters, with ``str`` methods (no regular expression), so
    it is linear in a constant on any input."""
    head = query[:REPORT_HEAD_CHARS].strip()
    if not head:
        return False
    lowered = head.lower()
    if any(phrase in lowered for phrase in ERROR_PHRASES) or _numbered(lowered):
        return True
    raw = head.replace("\u2019", "'").split(None, REPORT_HEAD_WORDS)[:REPORT_HEAD_WORDS]
    for i, token in enumerate(raw):
        bare = token.strip(_QUOTE_STRIP)
        colon = bare.endswith(":") or (token.endswith(":") and i + 1 < len(raw))
        name = bare.rstrip(":")
        if colon and i + 1 < len(raw):
            if name.lower() in ERROR_LABELS or token.strip("\"'`") == TOOL_WARNING:
                return True
            if _error_class(name):
                return True
        if name in ERRNO_NAMES:
            return True
    for span in _quoted_spans(head):
        words = span.replace("\u2019", "'").lower().split(None, REPORT_HEAD_WORDS)
        if len(words) >= ERROR_SPAN_MIN_WORDS and any(
            w.strip(_QUOTE_STRIP + ":") in ERROR_WORDS for w in words
        ):
            return True
    return _receives_error(_words(head))


def _numbered(lowered: str) -> bool:
    """Whether a phrase of :data:`NUMBERED_PHRASES` is followed by a digit in ``lowered``.
    Each search starts after the previous hit: linear in ``lowered``."""
    for phrase in NUMBERED_PHRASES:
        at = lowered.find(phrase)
        while at >= 0:
            end = at + len(phrase)
            if lowered[end : end + 1].isdigit():
                return True
            at = lowered.find(phrase, end)
    return False


def _receives_error(words: list[str]) -> bool:
    """``I get a strange error``, ``we keep getting this exception``, ``Getting an error when
    ...``: a receiving verb after a first-person subject (or first), an error noun within
    :data:`RECEIVE_SPAN` words after it."""
    for i, word in enumerate(words):
        if (
            word in RECEIVE_VERBS
            and (i == 0 or words[i - 1] in REPORT_SUBJECTS)
            and any(w in ERROR_NOUNS for w in words[i + 1 : i + 1 + RECEIVE_SPAN])
        ):
            return True
    return False


FAILURE_WORDS = frozenset(
    {
        "hung",
        "froze",
        "crashed",
        "segfaulted",
        "stalled",
        "stuck",
        "died",
        "fails",
        "misbehaves",
    }
)
"""Finite verbs and states of a program that stops doing its job (``fetchmail hung after
...``, ``the build fails on Windows``): never a noun or a modifier."""
FAILURE_NOUNISH = frozenset(
    {"hangs", "crashes", "freezes", "stalls", "dies", "segfaults", "hanging", "crashing"}
)
"""Failure verbs that are also plural nouns or modifiers (``Debugging crashes``, ``a
hanging indent``): read as a report (``Emacs crashes on startup``) only where the word
before is a subject, not a determiner, a preposition, a modal or an ``-ing`` word
(:data:`NOT_BEFORE_FAILURE`)."""
FAILURE_BASES = frozenset({"hang", "freeze", "crash", "fail", "die", "stall", "break"})
"""The same verbs after a plural subject (``connections hang after ...``, ``kubernetes pods
crash``): read only as :data:`FAILURE_NOUNISH` is, and only when the query ends there or a
word of situation follows (:data:`SITUATION_WORDS`): otherwise the base form is a noun of a
compound (``Kernel crash dumps``, ``Line break handling``, ``Feature freeze policy``)."""
NOT_BEFORE_FAILURE = frozenset(
    {
        "to",
        "a",
        "an",
        "the",
        "no",
        "any",
        "some",
        "this",
        "these",
        "those",
        "its",
        "their",
        "on",
        "of",
        "for",
        "about",
        "with",
        "from",
        "by",
        "in",
        "after",
        "before",
        "against",
        "during",
        "without",
        "avoid",
        "prevent",
        "and",
        "or",
        "may",
        "might",
        "can",
        "could",
        "should",
        "must",
        "will",
        "would",
        "expected",
    }
)
"""Words before a failure verb that make it a noun, a modifier or a possibility, not a
report (``tests may fail``, ``expected to fail``, ``about crashes``)."""
SITUATION_WORDS = frozenset(
    {
        "when",
        "whenever",
        "while",
        "after",
        "before",
        "during",
        "on",
        "in",
        "at",
        "with",
        "for",
        "if",
        "because",
        "since",
        "until",
        "unless",
        "upon",
        "every",
        "sometimes",
        "randomly",
        "immediately",
        "again",
        "",
    }
)
"""Words after a base failure verb that say when it fails (``""``: the query ends)."""
SINGULAR_DETERMINERS = frozenset({"a", "an", "this", "its", "each", "every", "another"})
"""Two words before a base form, these make its subject singular, so the base form is a noun
(``Insert a page break``): a plural subject takes the base verb (``the pods crash``)."""
FAILURE_PHRASES = (
    ("fails", "to"),
    ("failed", "to"),
    ("failing", "to"),
    ("fail", "to"),
    ("unable", "to"),
    ("refuses", "to"),
    ("refused", "to"),
    ("stopped", "working"),
    ("stops", "working"),
    ("not", "working"),
    ("no", "longer"),
    ("times", "out"),
    ("timed", "out"),
    ("timing", "out"),
    ("nothing", "happens"),
)
"""Two-word phrases of failure (``X fails to start``, ``mail no longer arrives``)."""
NEGATED_AUX = frozenset(
    {
        "doesn't",
        "don't",
        "didn't",
        "won't",
        "can't",
        "cannot",
        "isn't",
        "aren't",
        "wasn't",
        "weren't",
        "couldn't",
        "wouldn't",
        "hasn't",
        "haven't",
    }
)
"""Negated auxiliaries in one word (apostrophes normalised)."""
AUX = frozenset(
    {
        "does",
        "do",
        "did",
        "will",
        "can",
        "is",
        "are",
        "was",
        "were",
        "could",
        "would",
        "has",
        "have",
    }
)
"""Auxiliaries that a following ``not`` negates (``does not start``, ``are not delivered``)."""
NOT_A_SUBJECT = frozenset(
    {
        "that",
        "which",
        "who",
        "whom",
        "whose",
        "what",
        "why",
        "how",
        "when",
        "where",
        "if",
        "whether",
        "or",
        "and",
        "you",
        "to",
        "do",
    }
)
"""Words before a negation that make it a relative clause, a condition, an alternative or
advice (``tests that don't need a database``, ``whether or not``, ``you don't need``), not
a report that something fails."""
NOT_AFTER_NEGATION = frozenset(
    {
        "only",
        "just",
        "necessarily",
        "always",
        "all",
        "every",
        "need",
        "needed",
        "necessary",
        "required",
        "recommended",
        "have",
        "be",
        "yet",
        "to",
        "a",
        "an",
        "the",
        "matter",
        "use",
        "mix",
        "supported",
        "implemented",
        "included",
        "covered",
        "affected",
        "related",
        "intended",
    }
)
"""Words after a negation that make it a statement of scope or advice (``not only``, ``does
not need``, ``need not be``, ``do not use``), not of a failure."""
OPENING_FAILURES = frozenset({"cannot", "unable"})
"""First words of a report that leaves its subject out (``Cannot connect to the database``);
``Can't`` opens a question (:func:`is_question`)."""
PROBLEM_MIN_REPORT_WORDS = 3
"""A problem report has a subject, a predicate and something more (``Fetchmail hangs`` is
too short to tell from a heading)."""


def is_problem_report(query: str) -> bool:
    """Whether ``query`` states that something does not do its job: a failure verb after a
    subject (:data:`FAILURE_WORDS`: ``fetchmail hangs after the greeting``; a base form after
    a plural subject: ``connections hang``), a phrase of failure (:data:`FAILURE_PHRASES`:
    ``the daemon fails to start``, ``mail no longer arrives``), or a negated auxiliary after a
    subject (``the admin doesn't show my model``, ``my mails are not delivered``, ``static
    files not served``). A negation that opens the query (``Do not ...``, an order), follows
    a relative word or ``you`` (``tests that don't need a database``, ``you don't need``),
    or scopes (``not only``, ``does not need``) is no report. Such a statement asks for the
    passage that explains and fixes it, as a question does. Linear in a constant (the first
    :data:`REPORT_HEAD_WORDS` words of :data:`REPORT_HEAD_CHARS` characters)."""
    words = [w for w in _words(_outside_parentheses(query)) if w]
    if len(words) < PROBLEM_MIN_REPORT_WORDS:
        return False
    if words[0] in OPENING_FAILURES or (words[0], words[1]) in FAILURE_PHRASES:
        return True  # "Cannot connect to ...", "Unable to ...", "Nothing happens when ..."
    return any(_failure_at(words, i) or _negation_at(words, i) for i in range(1, len(words)))


def _failure_at(words: list[str], i: int) -> bool:
    """Whether ``words[i]`` is a failure verb, noun-like failure or phrase of failure after a
    subject (:func:`is_problem_report`)."""
    word = words[i]
    before = words[i - 1]
    after = words[i + 1] if i + 1 < len(words) else ""
    if word in FAILURE_WORDS and before not in NOT_A_SUBJECT and before != "to":
        return True
    subject = not (
        before in NOT_BEFORE_FAILURE or before in NOT_A_SUBJECT or before.endswith("ing")
    )
    singular = i >= 2 and words[i - 2] in SINGULAR_DETERMINERS  # "a page break"
    if subject and (
        word in FAILURE_NOUNISH
        or (word in FAILURE_BASES and after in SITUATION_WORDS and not singular)
    ):
        return True
    return (word, after) in FAILURE_PHRASES and before not in NOT_A_SUBJECT


def _negation_at(words: list[str], i: int) -> bool:
    """Whether ``words[i]`` is a negated auxiliary (or ``not`` after an auxiliary, or before
    a participle) after a subject that reports a failure, not scope or advice
    (:func:`is_problem_report`)."""
    word = words[i]
    before = words[i - 1]
    after = words[i + 1] if i + 1 < len(words) else ""
    negated = word in NEGATED_AUX or (
        word == "not" and after not in NOT_AFTER_NEGATION and after != ""
    )
    if not negated or before in NOT_A_SUBJECT or after in NOT_AFTER_NEGATION or not after:
        return False
    # "not" without an auxiliary reports only before a participle: "files not served"
    return word != "not" or before in AUX or _participle(after)


def _outside_parentheses(query: str) -> str:
    """The head of ``query`` without its parenthesised asides (``... raises (except that
    raises does not capture all exceptions)``): a negation inside one qualifies the
    statement, it does not report a failure. One pass over the head's words; an unclosed
    ``(`` drops the rest, a stray ``)`` is ignored."""
    kept: list[str] = []
    depth = 0
    for word in query[:REPORT_HEAD_CHARS].split():
        opens = word.count("(")
        if depth == 0 and opens == 0:
            kept.append(word)
        depth = max(0, depth + opens - word.count(")"))
    return " ".join(kept)


_PARTICIPLES = frozenset({"found", "shown", "sent", "seen", "run", "built", "written", "done"})


def _participle(word: str) -> bool:
    """Whether ``word`` reads as a participle after a bare ``not`` (``not loading``, ``not
    delivered``, ``not found``)."""
    return word.endswith(("ing", "ed")) or word in _PARTICIPLES
