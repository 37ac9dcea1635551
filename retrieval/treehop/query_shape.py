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
