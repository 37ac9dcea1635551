"""Random draws for the split-key rule (helper review78b, bench/README.md "(helper review78b)").

1. Leaks: a key of each vendor shape split once by a space at a random point after its
   vendor prefix (``the key is <head> <tail> and more``); a leak is a tail of 8+ characters
   shown, or a head of 13+ shown. 400 draws per shape, seed 1.
2. False positives: 20,000 lines of 2-8 words (words ending in ``sk-``, CamelCase
   identifiers, commit hashes, uuids, versions, paths, prose), seed 5; a line counts when
   :func:`redact` changes it and changes it differently without the split-key rule.

    PYTHONPATH=retrieval python bench/review78b_redaction_draws.py
"""

from __future__ import annotations

import hashlib
import random
import re
import string
import uuid

import treehop.redaction as R

A62 = string.ascii_letters + string.digits
U = A62 + "-_"
HEX = "0123456789abcdef"
PREFIX = re.compile(r"sk-(?:proj-|ant-api03-|or-v1-)?|ghp_|github_pat_|hf_|xoxb-|glpat-|AKIA|AIza")


def pick(al: str, n: int) -> str:
    return "".join(random.choice(al) for _ in range(n))


SHAPES = {
    "openai-proj": lambda: "sk-proj-" + pick(U, 156),
    "openai-legacy": lambda: "sk-" + pick(A62, 48),
    "anthropic": lambda: "sk-ant-api03-" + pick(U, 93),
    "openrouter": lambda: "sk-or-v1-" + pick(HEX, 64),
    "deepseek": lambda: "sk-" + pick(HEX, 32),
    "github": lambda: "ghp_" + pick(A62, 36),
    "github-pat": lambda: "github_pat_" + pick(A62 + "_", 82),
    "huggingface": lambda: "hf_" + pick(A62, 34),
    "slack": lambda: (
        "xoxb-" + pick(string.digits, 11) + "-" + pick(string.digits, 12) + "-" + pick(A62, 24)
    ),
    "gitlab": lambda: "glpat-" + pick(U, 20),
    "aws": lambda: "AKIA" + pick(string.ascii_uppercase + string.digits, 16),
    "google": lambda: "AIza" + pick(U, 35),
}


def leaks() -> None:
    random.seed(1)
    print("shape          leaks/draws (split after the prefix)")
    for name, make in SHAPES.items():
        n = bad = 0
        for _ in range(400):
            key = make()
            lo = PREFIX.match(key).end()  # type: ignore[union-attr]
            cut = random.randint(lo, len(key) - 1)
            a, b = key[:cut], key[cut:]
            out = R.redact(f"the key is {a} {b} and more")
            n += 1
            bad += (len(b) >= 8 and b in out) or (len(a) > 12 and a in out)
        print(f"{name:14s} {bad}/{n}")


SK_WORDS = ["task-Runner2", "disk-Usage", "kiosk-Mode", "ask-GPT4", "mask-RCNN", "Mask-RCNN50",
            "risk-Model3", "hf_hub", "whisk-V2", "desk-Top10", "sk-learn", "task-sk-Runner",
            "flask-SQLAlchemy", "Flask-Login2", "dask-ML", "husk-UI3", "risk-Score2024",
            "ask-Question42", "task-IDs", "disk-Image2"]  # fmt: skip
CAMEL = ["Data", "Loader", "Grid", "Search", "CV", "Model", "Http", "Client", "Tfidf",
         "Vectorizer", "Py", "Torch", "Json", "Api", "Key", "V2", "3D", "2024", "X"]  # fmt: skip


PLAIN = ["v1.2.3", "3.11.4", "2024-01-01", "release-2024", "build_42", "x86_64", "utf-8",
         "user42", "node_modules", "README", "python3"]  # fmt: skip


def camel() -> str:
    return "".join(random.choice(CAMEL) for _ in range(random.randint(2, 4)))


def word() -> str:
    r = random.random()
    if r < 0.2:
        return random.choice(SK_WORDS)
    if r < 0.45:
        return camel()
    if r < 0.55:
        return hashlib.sha1(str(random.random()).encode()).hexdigest()[: random.choice([7, 12, 40])]
    if r < 0.6:
        return str(uuid.UUID(int=random.getrandbits(128)))
    if r < 0.7:
        return random.choice(PLAIN)
    if r < 0.8:
        return "/usr/lib/" + camel() + "/" + camel()
    return random.choice(["the", "a", "of", "uses", "with", "for", "and", "Next", "see"])


def false_positives() -> None:
    random.seed(5)
    spaced = R._redact_spaced
    fp = 0
    for _ in range(20000):
        text = " ".join(word() for _ in range(random.randint(2, 8)))
        out = R.redact(text)
        if out != text:
            R._redact_spaced = lambda s: s  # type: ignore[assignment]
            try:
                fp += R.redact(text) != out
            finally:
                R._redact_spaced = spaced
    print(f"lines changed by the split-key rule: {fp} of 20000")


if __name__ == "__main__":
    leaks()
    false_positives()
