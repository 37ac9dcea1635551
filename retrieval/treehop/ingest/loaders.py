"""Reading files from disk: which files are text, how they decode, what is skipped and why."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import ClassVar

from ..errors import IngestError

MARKDOWN_EXT = {".md", ".markdown", ".mdx"}
TEXT_EXT = {".txt", ".rst", ".text", ".adoc", ".org", ".csv", ".tsv", ".log", ""}
CODE_EXT = {
    ".py",
    ".js",
    ".ts",
    ".tsx",
    ".jsx",
    ".java",
    ".go",
    ".rs",
    ".c",
    ".h",
    ".cc",
    ".cpp",
    ".hpp",
    ".cs",
    ".rb",
    ".php",
    ".swift",
    ".kt",
    ".scala",
    ".sh",
    ".bash",
    ".sql",
    ".r",
    ".lua",
    ".pl",
    ".yaml",
    ".yml",
    ".toml",
    ".json",
    ".ini",
    ".cfg",
    ".xml",
    ".css",
    ".scss",
}
HTML_EXT = {".html", ".htm", ".xhtml"}
SKIP_DIRS = {
    ".git",
    ".hg",
    ".svn",
    "__pycache__",
    "node_modules",
    ".venv",
    "venv",
    ".tox",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".idea",
    ".vscode",
    ".treehop",
}
MAX_FILE_BYTES = 5_000_000


@dataclass
class LoadedFile:
    """A text file ready to become a leaf (or a chunked file node)."""

    relpath: str
    text: str
    kind: str  # markdown | text | code | html


@dataclass
class LoadReport:
    """What a directory walk read and what it skipped, with reasons."""

    files: list[LoadedFile] = field(default_factory=list)
    skipped_binary: list[str] = field(default_factory=list)
    skipped_unreadable: list[str] = field(default_factory=list)
    skipped_large: list[str] = field(default_factory=list)
    skipped_empty: list[str] = field(default_factory=list)
    skipped_other: list[str] = field(default_factory=list)
    skipped_dirs: list[str] = field(default_factory=list)
    skipped_hidden: list[str] = field(default_factory=list)
    skipped_names: list[str] = field(default_factory=list)


def _addressable(name: str) -> bool:
    """A name that can become a URI segment: valid UTF-8 and free of control characters."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes, kept by os as lone surrogates
        return False
    return not any(ord(ch) < 32 or ord(ch) == 127 for ch in name)


def _printable(rel: str) -> str:
    """A path for a report: undecodable bytes as ``\\xNN``, control characters escaped."""
    raw = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(ch if ord(ch) >= 32 and ord(ch) != 127 else f"\\x{ord(ch):02x}" for ch in raw)


class _HTMLText(HTMLParser):
    """Visible text of an HTML page, keeping headings and paragraphs on their own lines."""

    _BLOCK: ClassVar[frozenset[str]] = frozenset(
        {
            "p",
            "div",
            "br",
            "li",
            "tr",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "pre",
            "section",
            "article",
            "dt",
            "dd",
            "table",
            "title",
        }
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in {"script", "style", "nav", "head"} and tag != "head":
            self._skip += 1
        if tag in self._BLOCK:
            self.parts.append("\n")
        if tag in {"h1", "h2", "h3"}:
            self.parts.append("#" * int(tag[1]) + " ")

    def handle_endtag(self, tag: str) -> None:
        if tag in {"script", "style", "nav"} and self._skip:
            self._skip -= 1
        if tag in self._BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    p = _HTMLText()
    p.feed(html)
    text = "".join(p.parts)
    text = re.sub(r"[ \t\r\f\v]+", " ", text)
    text = re.sub(r"\n\s*\n\s*", "\n\n", text)
    return text.strip()


def kind_of(path: Path) -> str | None:
    ext = path.suffix.lower()
    if ext in MARKDOWN_EXT:
        return "markdown"
    if ext in HTML_EXT:
        return "html"
    if ext in CODE_EXT:
        return "code"
    if ext in TEXT_EXT:
        return "text"
    return None


def decode(data: bytes) -> str | None:
    """UTF-8 (with BOM), else UTF-16 with BOM, else None (treated as binary)."""
    if b"\x00" in data[:8192] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None
    for enc in ("utf-8-sig", "utf-16"):
        try:
            text = data.decode(enc)
        except UnicodeDecodeError:
            continue
        if enc == "utf-16" and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
            return None
        return text
    return None


def read_file(path: Path, relpath: str, report: LoadReport) -> LoadedFile | None:
    kind = kind_of(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            report.skipped_large.append(relpath)
            return None
        data = path.read_bytes()
    except OSError:
        report.skipped_unreadable.append(relpath)
        return None
    text = decode(data)
    if text is None:
        report.skipped_binary.append(relpath)
        return None
    if kind is None:
        kind = "text"
    if kind == "html":
        text = html_to_text(text)
    if not text.strip():
        report.skipped_empty.append(relpath)
        return None
    return LoadedFile(relpath=relpath, text=text, kind=kind)


def walk(root: Path) -> LoadReport:
    """Read every text file under ``root`` (sorted, hidden and tool directories skipped)."""
    if not root.exists():
        raise IngestError(f"path does not exist: {root}")
    report = LoadReport()
    if root.is_file():
        if not _addressable(root.name):
            report.skipped_names.append(_printable(root.name))
            return report
        f = read_file(root, root.name, report)
        if f is not None:
            report.files.append(f)
        return report
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        kept: list[str] = []
        for d in sorted(dirnames):
            if d in SKIP_DIRS or d.startswith(".") or not _addressable(d):
                # Counted and named in AddResult.skipped_dirs: nothing is skipped silently.
                report.skipped_dirs.append(
                    _printable((Path(dirpath) / d).relative_to(root).as_posix())
                )
            else:
                kept.append(d)
        dirnames[:] = kept
        for name in sorted(filenames):
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            if not _addressable(name):
                report.skipped_names.append(_printable(rel))
                continue
            if name.startswith("."):
                report.skipped_hidden.append(rel)
                continue
            if p.is_symlink() or not p.is_file():
                report.skipped_other.append(rel)
                continue
            f = read_file(p, rel, report)
            if f is not None:
                report.files.append(f)
    return report
