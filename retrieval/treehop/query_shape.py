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
    words = text[:200].split(None, PROBLEM_MIN_WORDS)
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
