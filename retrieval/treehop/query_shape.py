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


def is_question(query: str) -> bool:
    """Whether ``query`` is shaped as a question (see the module docstring)."""
    text = query.strip()
    if not text:
        return False
    if text.endswith(QUESTION_MARKS):
        return True
    words = text[:200].split(None, 3)
    if len(words) < 3:
        return False
    first = words[0].lower().strip("\"'(").replace("\u2019", "'")
    second = words[1].lower()
    if first not in QUESTION_WORDS or second == "to" or (first == "do" and second == "not"):
        return False  # "How to ...", "When to ...": a guide's title; "Do not ...": an order
    # "When using X, ...": a sentence that opens with a clause, not a question
    return not (first in CLAUSE_WORDS and "," in text)
