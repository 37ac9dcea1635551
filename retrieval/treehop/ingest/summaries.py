"""Extractive L0/L1 summaries: real text from the content, never a placeholder.

Until an LLM summariser is configured, a directory is described by what it contains: its own
README/index (if any) and the headings and first sentences of its children. A file's abstract is
its title (first heading or docstring) and first sentence; its overview is its outline. These
texts are embedded, so they must carry the vocabulary of the content they stand for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

ABSTRACT_CHARS = 300
OVERVIEW_CHARS = 1800

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.M)
_SENT = re.compile(r"(.+?[.!?。！？])(\s|$)", re.S)
_README = re.compile(r"^(readme|index|overview|about)(\.[a-z0-9]+)?$", re.I)


@dataclass(frozen=True)
class ChildSummary:
    name: str
    abstract: str
    is_leaf: bool


class Summarizer(Protocol):
    """Writes L0 abstracts and L1 overviews for files and directories."""

    def summarize_file(self, name: str, text: str, kind: str) -> tuple[str, str]: ...

    def summarize_directory(
        self, name: str, children: Sequence[ChildSummary], readme: str | None
    ) -> tuple[str, str]: ...


def _clip(text: str, n: int) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) <= n:
        return text
    cut = text[:n]
    sp = cut.rfind(" ")
    return (cut[:sp] if sp > n * 0.6 else cut).rstrip(" ,;:") + "…"


def first_sentence(text: str) -> str:
    body = "\n".join(
        ln
        for ln in text.splitlines()
        if ln.strip()
        and not _HEADING.match(ln)
        and not ln.strip().startswith(("```", "---", "===", "|", "<!--"))
    )
    body = re.sub(r"[*_`>]+", "", body)
    m = _SENT.search(body)
    return (m.group(1) if m else body).strip()


def title_of(text: str, kind: str) -> str:
    if kind in {"markdown", "html"}:
        m = _HEADING.search(text)
        if m:
            return m.group(1).strip()
    if kind == "code":
        m = re.search(r'^\s*(?:"""|\'\'\')\s*(.+?)\s*$', text, re.M)
        if m:
            return m.group(1).strip().strip("\"'")
        m = re.search(r"^\s*(?://|#|--|/\*+)\s*(\w.+?)\s*$", text, re.M)
        if m:
            return m.group(1).strip()
    for ln in text.splitlines():
        if ln.strip():
            return _clip(ln.strip(), 120)
    return ""


def humanize(name: str) -> str:
    """``feature-store_v2.md`` -> ``feature store v2``."""
    stem = re.sub(r"\.[A-Za-z0-9]{1,6}$", "", name)
    return re.sub(r"[-_]+", " ", stem).strip()


class ExtractiveSummarizer:
    """The default summariser: headings and first sentences, bounded in length."""

    def summarize_file(self, name: str, text: str, kind: str) -> tuple[str, str]:
        title = title_of(text, kind)
        sent = first_sentence(text)
        head = title or humanize(name)
        abstract = head if sent.startswith(head) else f"{head}: {sent}" if sent else head
        outline = [h.strip() for h in _HEADING.findall(text)] if kind != "code" else []
        if kind == "code":
            outline = re.findall(
                r"^\s*(?:def|class|func|fn|function|public|interface)\s+(\w+)", text, re.M
            )
        overview = abstract
        if outline:
            overview += "\nContents: " + "; ".join(dict.fromkeys(outline))
        return _clip(abstract, ABSTRACT_CHARS), _clip(overview, OVERVIEW_CHARS)

    def summarize_directory(
        self, name: str, children: Sequence[ChildSummary], readme: str | None
    ) -> tuple[str, str]:
        label = humanize(name)
        if readme:
            abstract = f"{label}: {first_sentence(readme) or title_of(readme, 'markdown')}"
        else:
            firsts = [c.abstract.split(":")[0] for c in children[:4] if c.abstract]
            abstract = f"{label}: " + "; ".join(firsts) if firsts else label
        lines = [f"- {humanize(c.name)}: {c.abstract}" for c in children]
        overview = abstract + ("\n" + "\n".join(lines) if lines else "")
        return _clip(abstract, ABSTRACT_CHARS), overview[:OVERVIEW_CHARS]


def is_readme(name: str) -> bool:
    return bool(_README.match(name))
