"""Is any question's text left in a natural set's corpus? A check to run before any numbers.

``natural_sets._check_removed`` refuses a set whose corpus holds a question of 4 words or
more verbatim (case and spacing aside). This script looks harder, per file, for every
question of the set and every question left out of it (``NaturalSet.left_out``), whatever
its length, and prints what it finds for a person to judge:

* ``exact``: the question's text (case, spacing aside) is in the file, as whole words (not
  "what is s" of "What is S?" inside "what is sometimes called");
* ``bare``: its text without the closing punctuation ("?", "…", "!", ".") is, as whole
  words, when that leaves 3 words or more (a contents link "How do I ... based on" without
  the ellipsis);
* ``run``: the longest run of the question's consecutive words (the judge's ``\\w+``
  tokens, lower-cased) found in the file's word sequence, when it is 6 words or more and
  covers at least 60% of the question (a link text or a sentence quoting most of it in
  other markup or with a word changed).

With ``--html`` the set's blanked-HTML variant (``bench_html_blanked.html_variant``) is
checked instead, its pages' tags stripped and entities decoded first (round 14's check of
the lead, bench/README.md). Exit status 1 when an ``exact`` or ``bare`` copy is found.

Questions of one word (under :data:`MIN_COPY_WORDS` ``\\w+`` words: cryptsetup's entry 1.2
"WARNINGS", mc's 12.1 "Authorship") are checked differently: one word has no order of words
to copy, and the word in running text ("there are no visible warnings") is the language, not
the question. Such a question is an ``exact`` copy only where it stands **alone on a line**
(an HTML element's text), an entry number and markup aside: a heading, a contents or list
entry, a link text (``## WARNINGS``, ``* **1.2 WARNINGS**``, ``[Authorship](#authorship)``),
which is how an entry title is copied. Elsewhere it is listed as ``word`` (for reading; no
exit status). From two words on a copy is matched as a phrase, however short: a
cross-reference "(see What is CRAN?)" or "*note Reporting Bugs::" is a copy.

    python bench/check_question_leaks.py --sets getmail-faq [--html]
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datasets as ds
import natural_sets as ns

_TAG = re.compile(r"<[^>]*>")
_WORD = re.compile(r"\w+")
_CLOSING = re.compile(r"[\s?!.…:]+$")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
MIN_RUN = 6
MIN_RUN_SHARE = 0.6
MIN_COPY_WORDS = 2
"""Questions of fewer ``\\w+`` words are copies only alone on a line (module docstring)."""


@dataclass(frozen=True)
class Leak:
    question: str
    file: str
    kind: str  # "exact", "bare", "run", or "word" (a one-word question in running text)
    words: int  # the run's length (the question's words for exact and bare)
    context: str  # the text around the copy, for reading


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def plain_text(page: str, is_html: bool) -> str:
    """A file's text as the check reads it: tags dropped and entities decoded when HTML."""
    return html.unescape(_TAG.sub(" ", page)) if is_html else page


def _phrase(text: str) -> re.Pattern[str]:
    """``text`` (normalised) as whole words: no word character just before or after it
    where it starts or ends with one."""
    head = r"(?<!\w)" if _WORD.match(text) else ""
    tail = r"(?!\w)" if re.search(r"\w$", text) else ""
    return re.compile(head + re.escape(text) + tail)


def _line_words(line: str) -> list[str]:
    """A line's lower-cased words, a markdown link's target and a leading entry number
    ("1.2", "12.") aside: what a heading, list entry or link line says."""
    words = [w.lower() for w in _WORD.findall(_LINK_TARGET.sub("]", line))]
    while words and words[0].isdigit():
        words.pop(0)
    return words


def alone_on_a_line(question: str, lines: Sequence[str]) -> int | None:
    """The index of the first line of ``lines`` that is ``question`` alone (its words, in
    order, and nothing else but markup and an entry number), or None."""
    want = [w.lower() for w in _WORD.findall(question)]
    return next((i for i, ln in enumerate(lines) if want and _line_words(ln) == want), None)


def longest_run(question: str, words_text: str) -> tuple[int, str]:
    """(length, words) of the longest run of ``question``'s consecutive words that occurs in
    ``words_text`` (a space-framed string of lower-cased words); (0, "") when none."""
    q = [w.lower() for w in _WORD.findall(question)]
    for n in range(len(q), 0, -1):
        for i in range(len(q) - n + 1):
            gram = " ".join(q[i : i + n])
            if f" {gram} " in words_text:
                return n, gram
    return 0, ""


def _around(text: str, pos: int, width: int = 80) -> str:
    return " ".join(text[max(0, pos - width) : pos + width].split())


def find_leaks(files: dict[str, str], questions: Sequence[str], is_html: bool) -> list[Leak]:
    """Every copy of a question found in ``files`` (see the module docstring)."""
    leaks: list[Leak] = []
    phrases: dict[str, tuple[re.Pattern[str], re.Pattern[str] | None]] = {}
    for q in questions:
        t = _norm(q)
        b = _CLOSING.sub("", t)
        phrases[q] = (_phrase(t), _phrase(b) if b != t and ns.question_words(b) >= 3 else None)
    for rel, raw in sorted(files.items()):
        as_html = is_html or rel.endswith(".html")
        text = _norm(plain_text(raw, as_html))
        words_text = " " + " ".join(w.lower() for w in _WORD.findall(text)) + " "
        lines: list[str] | None = None  # (read only for a one-word question)
        for q in questions:
            n_words = ns.question_words(q)  # (the scrub's count: one for both)
            exact, bare = phrases[q]
            if n_words < MIN_COPY_WORDS:
                m = exact.search(text) if n_words else None
                if m is None:
                    continue
                if lines is None:
                    lines = (html.unescape(_TAG.sub("\n", raw)) if as_html else raw).split("\n")
                at = alone_on_a_line(q, lines)
                if at is not None:
                    leaks.append(Leak(q, rel, "exact", n_words, " ".join(lines[at].split())))
                else:
                    leaks.append(Leak(q, rel, "word", n_words, _around(text, m.start())))
                continue
            if m := exact.search(text):
                leaks.append(Leak(q, rel, "exact", n_words, _around(text, m.start())))
                continue
            if bare is not None and (m := bare.search(text)):
                leaks.append(Leak(q, rel, "bare", n_words, _around(text, m.start())))
                continue
            n, gram = longest_run(q, words_text)
            if n >= MIN_RUN and n >= MIN_RUN_SHARE * n_words:
                leaks.append(Leak(q, rel, "run", n, gram))
    return leaks


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--sets", required=True, help="comma-separated natural set names")
    ap.add_argument("--html", action="store_true", help="check the blanked-HTML variant")
    args = ap.parse_args(argv)
    found_copy = False
    for name in args.sets.split(","):
        # cranfield's tree is a k-means of the default embedder's vectors (cached)
        nset = ns.load_natural_set(name, ds.default_embedder() if name == "cranfield" else None)
        left_out = list(nset.left_out)  # (the variant blanks them too, and does not keep them)
        if args.html:
            import bench_html_blanked as bh

            nset = bh.html_variant(nset)
        asked = [q.text for q in nset.questions] + left_out
        leaks = find_leaks(nset.files, asked, args.html)
        n_exact = sum(lk.kind in ("exact", "bare") for lk in leaks)
        n_word = sum(lk.kind == "word" for lk in leaks)
        found_copy |= n_exact > 0
        print(
            f"{nset.name}: {len(asked)} questions ({len(left_out)} left out), "
            f"{len(nset.files)} files: {n_exact} exact/bare copies, "
            f"{len(leaks) - n_exact - n_word} long runs, {n_word} one-word questions as words"
        )
        for lk in leaks:
            print(f"  [{lk.kind} {lk.words}w] {lk.file}: {lk.question!r}\n      ... {lk.context}")
    return 1 if found_copy else 0


if __name__ == "__main__":
    raise SystemExit(main())
