"""Is any question's text left in a natural set's corpus? A check to run before any numbers.

``natural_sets._check_removed`` refuses a set whose corpus holds a question of 4 words or
more verbatim (case and spacing aside). This script looks harder, per file, for every
question of the set and every question left out of it (``NaturalSet.left_out``), whatever
its length, and prints what it finds for a person to judge:

* ``exact``: the question's text (case, spacing aside) is in the file;
* ``bare``: its text without the closing punctuation ("?", "…", "!", ".") is, when that
  leaves 3 words or more (a contents link "How do I ... based on" without the ellipsis);
* ``run``: the longest run of the question's consecutive words (the judge's ``\\w+``
  tokens, lower-cased) found in the file's word sequence, when it is 6 words or more and
  covers at least 60% of the question (a link text or a sentence quoting most of it in
  other markup or with a word changed).

With ``--html`` the set's blanked-HTML variant (``bench_html_blanked.html_variant``) is
checked instead, its pages' tags stripped and entities decoded first (round 14's check of
the lead, bench/README.md). Exit status 1 when an ``exact`` or ``bare`` copy is found.

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

import natural_sets as ns

_TAG = re.compile(r"<[^>]*>")
_WORD = re.compile(r"\w+")
_CLOSING = re.compile(r"[\s?!.…:]+$")
MIN_RUN = 6
MIN_RUN_SHARE = 0.6


@dataclass(frozen=True)
class Leak:
    question: str
    file: str
    kind: str  # "exact", "bare" or "run"
    words: int  # the run's length (the question's words for exact and bare)
    context: str  # the text around the copy, for reading


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def plain_text(page: str, is_html: bool) -> str:
    """A file's text as the check reads it: tags dropped and entities decoded when HTML."""
    return html.unescape(_TAG.sub(" ", page)) if is_html else page


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
    for rel, raw in sorted(files.items()):
        text = _norm(plain_text(raw, is_html or rel.endswith(".html")))
        words_text = " " + " ".join(w.lower() for w in _WORD.findall(text)) + " "
        for q in questions:
            t = _norm(q)
            n_words = len(_WORD.findall(q))
            pos = text.find(t)
            if pos >= 0:
                leaks.append(Leak(q, rel, "exact", n_words, _around(text, pos)))
                continue
            bare = _CLOSING.sub("", t)
            if bare != t and len(bare.split()) >= 3 and (pos := text.find(bare)) >= 0:
                leaks.append(Leak(q, rel, "bare", n_words, _around(text, pos)))
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
        nset = ns.load_natural_set(name, None)
        left_out = list(nset.left_out)  # (the variant blanks them too, and does not keep them)
        if args.html:
            import bench_html_blanked as bh

            nset = bh.html_variant(nset)
        asked = [q.text for q in nset.questions] + left_out
        leaks = find_leaks(nset.files, asked, args.html)
        n_exact = sum(lk.kind != "run" for lk in leaks)
        found_copy |= n_exact > 0
        print(
            f"{nset.name}: {len(asked)} questions ({len(left_out)} left out), "
            f"{len(nset.files)} files: {n_exact} exact/bare copies, "
            f"{len(leaks) - n_exact} long runs"
        )
        for lk in leaks:
            print(f"  [{lk.kind} {lk.words}w] {lk.file}: {lk.question!r}\n      ... {lk.context}")
    return 1 if found_copy else 0


if __name__ == "__main__":
    raise SystemExit(main())
