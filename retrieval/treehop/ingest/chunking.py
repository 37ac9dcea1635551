"""Splitting long files into ordered chunks that fit the embedder's window.

Splits prefer structure: Markdown headings, then blank lines (paragraphs / code blocks), then
sentence ends, and only as a last resort a hard cut. Each chunk carries the nearest heading path
as a title so that a chunk out of context still says what it is about.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADING = re.compile(r"^(#{1,6})\s+(.*\S)\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


@dataclass
class Chunk:
    index: int
    title: str
    text: str


def _split_long(block: str, max_chars: int) -> list[str]:
    if len(block) <= max_chars:
        return [block]
    pieces: list[str] = []
    cur = ""
    for sent in _SENTENCE_END.split(block):
        while len(sent) > max_chars:
            pieces.append(sent[:max_chars])
            sent = sent[max_chars:]
        if len(cur) + len(sent) + 1 > max_chars and cur:
            pieces.append(cur)
            cur = sent
        else:
            cur = f"{cur} {sent}" if cur else sent
    if cur:
        pieces.append(cur)
    return pieces


def split_text(text: str, kind: str, max_chars: int = 1000) -> list[Chunk]:
    """Split ``text`` into chunks of at most about ``max_chars`` characters, in order."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    heads: list[tuple[int, str]] = []
    for line in text.splitlines():
        m = _HEADING.match(line) if kind in {"markdown", "html"} else None
        if m:
            level = len(m.group(1))
            heads = [h for h in heads if h[0] < level] + [(level, m.group(2).strip())]
            sections.append((" > ".join(h[1] for h in heads), [line]))
        else:
            sections[-1][1].append(line)
    chunks: list[Chunk] = []
    carry = ""
    for title, lines in sections:
        body = "\n".join(lines).strip()
        if not body:
            continue
        if "\n" not in body and _HEADING.match(body):
            # A heading with no body of its own (a document title): keep it for the next section.
            carry = f"{carry}\n{body}".strip()
            continue
        if carry:
            body, carry = f"{carry}\n\n{body}", ""
        blocks = [b.strip() for b in re.split(r"\n\s*\n", body) if b.strip()]
        cur = ""
        for block in blocks:
            for piece in _split_long(block, max_chars):
                if cur and len(cur) + len(piece) + 2 > max_chars:
                    chunks.append(Chunk(len(chunks), title, cur))
                    cur = piece
                else:
                    cur = f"{cur}\n\n{piece}" if cur else piece
        if cur:
            chunks.append(Chunk(len(chunks), title, cur))
    if carry:
        chunks.append(Chunk(len(chunks), "", carry))
    return chunks
