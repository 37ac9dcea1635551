"""Tag format: ``source:label``, stored as a list, accepted and rendered as ``a;b;c``.

The source says who wrote the tag (the maintainers' request in the seed thread): ``user`` for tags
given at ingest, ``auto`` for keywords extracted from the text, ``inherit`` for tags a directory
passed down to its descendants, ``llm`` for tags a model assigned. Labels are normalised (Unicode
case-folded, whitespace collapsed to ``-``) so that ``Machine Learning`` and ``machine-learning``
are one tag. Filters and hops compare labels, not sources.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence

from .errors import InvalidTagError
from .redaction import shown_name
from .validation import JOINERS, has_invisible_format, is_blank

SOURCES = ("user", "auto", "inherit", "llm")
MAX_LABEL_LENGTH = 64
_WS = re.compile(r"\s+")
_BAD = re.compile(r"[;:,\"'`<>{}\[\]()\x00-\x1f]")


def _shown(text: object, chars: int = 100) -> str:
    """A caller's tag as an error shows it: cut, escaped and redacted
    (:func:`~treehop.redaction.shown_name`; a key pasted as a tag was echoed whole)."""
    return shown_name(text, chars)


def normalize_label(label: str) -> str:
    """Normalise a tag label or raise :class:`InvalidTagError`."""
    if not isinstance(label, str):
        raise InvalidTagError(f"tag must be a string, got {type(label).__name__}")
    s = unicodedata.normalize("NFKC", label).strip().casefold()
    s = _WS.sub("-", s)
    s = s.strip("-")
    if not s:
        raise InvalidTagError(f"empty tag {_shown(label)}")
    if len(s) > MAX_LABEL_LENGTH:
        raise InvalidTagError(f"tag {_shown(label)} is longer than {MAX_LABEL_LENGTH} characters")
    if any("\ud800" <= ch <= "\udfff" for ch in s):
        raise InvalidTagError(
            f"tag {_shown(label)} contains a lone surrogate (not valid Unicode text)"
        )
    if _BAD.search(s):
        raise InvalidTagError(
            f"tag {_shown(label)} contains a forbidden character (one of ;:,\"'`<>{{}}[]())"
        )
    return s


_UNSHOWN = re.compile(r"[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""DEL, the C1 controls (``\x9b`` is a terminal's CSI) and the bidirectional embeddings,
overrides and isolates (U+202A-U+202E, U+2066-U+2069): ``_BAD`` refused C0 controls only, and
``treehop tag`` printed such a label to the terminal as it was."""


def new_label(label: str) -> str:
    """:func:`normalize_label` for a tag about to be *written* (a caller's or a model's): also
    refused, a label of only invisible characters (``"\u200b"``: empty, as an empty tag is;
    :func:`~treehop.validation.is_blank`), one holding a :data:`_UNSHOWN` character, and one
    holding an invisible format character inside visible text
    (:func:`~treehop.validation.has_invisible_format`).

    Why not in :func:`normalize_label`: stored tags are normalised again (a directory's
    own labels at each re-describe, filters, removals); one stored before this check must
    still be read, found and removable."""
    s = normalize_label(label)
    if is_blank(s):
        raise InvalidTagError(f"empty tag {_shown(label)} (no visible character)")
    if _UNSHOWN.search(s):
        raise InvalidTagError(
            f"tag {_shown(label)} contains a control or bidirectional formatting character"
        )
    if has_invisible_format(s):
        raise InvalidTagError(
            f"tag {_shown(label)} contains an invisible format character (zero-width space,"
            " joiner, BOM, soft hyphen...): it would look like another tag"
        )
    return s


def make_tag(source: str, label: str) -> str:
    """Build a ``source:label`` tag."""
    if source not in SOURCES:
        raise InvalidTagError(f"unknown tag source {source!r}; expected one of {SOURCES}")
    return f"{source}:{normalize_label(label)}"


def parse_tag(tag: str, default_source: str = "user") -> str:
    """Normalise one tag; a bare label gets ``default_source``."""
    if not isinstance(tag, str):
        raise InvalidTagError(f"tag must be a string, got {type(tag).__name__}")
    head, sep, rest = tag.strip().partition(":")
    if sep and head.strip().casefold() in SOURCES:
        return make_tag(head.strip().casefold(), rest)
    if sep:
        raise InvalidTagError(
            f"tag {_shown(tag)} has an unknown source {_shown(head, 60)}; expected one of {SOURCES}"
        )
    return make_tag(default_source, tag)


MAX_TAGS = 256
"""At most this many tags in one argument (a bound on work and on stored metadata)."""


def tag_items(value: object, name: str = "tags") -> list[str] | None:
    """The raw items of a tags argument: a ``;``-separated string or a list/tuple/set of strings.

    ``None`` means "no tags given". A string that holds no tag (``""``, ``";;"``), a mapping,
    bytes or any other type is an :class:`InvalidTagError`: silently reading such a value as
    "no tags" would turn a caller's mistake into an unfiltered search.
    """
    if value is None:
        return None
    if isinstance(value, str):
        items = [p for p in value.split(";") if p.strip()]
        if not items:
            raise InvalidTagError(f"{name}={value!r} holds no tag; pass None for no tags")
    elif isinstance(value, (Mapping, bytes, bytearray)) or not isinstance(
        value, (list, tuple, set, frozenset)
    ):
        raise InvalidTagError(
            f"{name} must be a string 'a;b' or a list of strings, got {type(value).__name__}"
        )
    else:
        items = list(value)
        for t in items:
            if not isinstance(t, str):
                raise InvalidTagError(f"{name} must hold strings, got {type(t).__name__}")
    if len(items) > MAX_TAGS:
        raise InvalidTagError(f"{name} has {len(items)} tags; the limit is {MAX_TAGS}")
    return items


def parse_tags(value: str | Iterable[str] | None, default_source: str = "user") -> list[str]:
    """Accept a list or a ``;``-separated string; return normalised, de-duplicated tags."""
    items = tag_items(value)
    if items is None:
        return []
    out = dedupe(parse_tag(t, default_source) for t in items)
    for t in out:  # (new tags: see new_label)
        new_label(label_of(t))
    check_look_alikes(label_of(t) for t in out)
    return out


def user_tags(value: str | Iterable[str] | None, name: str = "tags") -> list[str]:
    """:func:`parse_tags` for tags a caller gives (``add_resource(tags=)``, ``set_tags(add=)``,
    a document's ``tags`` metadata, ``treehop index --tag``, ``treehop tag --add``): user tags,
    a bare label or ``user:label``. A tag naming another source (``auto:``, ``inherit:``,
    ``llm:``) is an :class:`InvalidTagError`. Why: those are written by treehop's taggers and
    rewritten whenever they run, so ``add_resource(..., tags="auto:x")`` and
    ``set_tags(uri, add=["llm:x"])`` answered as if done and kept nothing (with the default
    tagger; without one the tag stayed until a tagger ran). A document's ``tags`` metadata
    reads :func:`document_tags` instead."""
    out = parse_tags(value, default_source="user")
    for tag in out:
        source = source_of(tag)
        if source != "user":
            label = label_of(tag)
            raise InvalidTagError(
                f"{name}: {_shown(tag)} names the {source!r} source; the tags given here are "
                f"user tags ({_shown(label, 60)} or {_shown('user:' + label, 65)}): "
                f"{source}: tags are written by "
                "treehop's taggers and replaced whenever they run"
            )
    return out


def document_tags(value: str | Iterable[str] | None) -> list[str]:
    """The user tags of a document's ``tags`` metadata (``add_documents`` / ``add_records`` /
    LlamaIndex nodes): :func:`parse_tags` with every tag of a tagger's source (``auto:``,
    ``inherit:``, ``llm:``) left out. Why not refused as :func:`user_tags` refuses them: a
    retriever's documents show their node's tags in that key, so copying results into another
    store (``add_documents(other, retriever.invoke(q))``) hands them back; those tags are the
    taggers' to write again there, and refusing them broke the copy."""
    return [t for t in parse_tags(value, default_source="user") if source_of(t) == "user"]


_NO_JOINERS = dict.fromkeys(map(ord, JOINERS))


def joinerless(label: str) -> str:
    """``label`` without ZWNJ / ZWJ: what two labels that look alike have in common."""
    return label.translate(_NO_JOINERS) if not label.isascii() else label


def check_look_alikes(new: Iterable[str], existing: Iterable[str] = ()) -> None:
    """Refuse (:class:`InvalidTagError`) a new label that differs from another new label, or
    from an ``existing`` label of the same node, only by joiners (ZWNJ / ZWJ).

    Why: :func:`new_label` keeps a joiner between two non-ASCII characters (Persian and the
    Indic scripts spell with it), so ``\u0645\u06cc\u200c\u062e`` and
    ``\u0645\u06cc\u062e`` -- which most fonts draw alike -- were two tags on one node: a
    removal or a filter by the one a reader sees could miss the other. Refused rather than
    merged: which spelling is right is the caller's to say (remove the old one in the same
    ``set_tags`` call to respell it). Labels only (``existing``: the node's labels that stay);
    stored look-alikes are still shown and removable by their own labels."""
    seen: dict[str, str] = {}
    for label in existing:
        seen.setdefault(joinerless(label), label)
    mine: dict[str, str] = {}
    for label in new:
        key = joinerless(label)
        other = mine.get(key, seen.get(key))
        if other is not None and other != label:
            raise InvalidTagError(
                f"tag {_shown(label)} differs from the tag {_shown(other)} only by a "
                "zero-width joiner or non-joiner: the two would look alike (remove the one to "
                "respell it)"
            )
        mine.setdefault(key, label)


def dedupe(tags: Iterable[str]) -> list[str]:
    """Drop repeated tags, keeping first occurrence order."""
    seen: set[str] = set()
    out: list[str] = []
    for t in tags:
        if t not in seen:
            seen.add(t)
            out.append(t)
    return out


def label_of(tag: str) -> str:
    """The label of a stored tag (``auto:pytorch`` -> ``pytorch``)."""
    return tag.partition(":")[2] if ":" in tag else tag


def source_of(tag: str) -> str:
    return tag.partition(":")[0] if ":" in tag else "user"


def labels(tags: Iterable[str]) -> set[str]:
    return {label_of(t) for t in tags}


def normalize_filter_labels(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """Normalise tags given as a filter; a source prefix is allowed and ignored."""
    items = tag_items(value)
    if items is None:
        return ()
    return tuple(dedupe(label_of(parse_tag(t)) for t in items))


def render(tags: Iterable[str]) -> str:
    """The ``;``-separated string form."""
    return ";".join(tags)


def merge(*groups: Iterable[str]) -> list[str]:
    """Merge tag lists; when a label appears under several sources, the first source wins
    in the order user > llm > auto > inherit, so that user intent is never overwritten."""
    rank = {"user": 0, "llm": 1, "auto": 2, "inherit": 3}
    best: dict[str, str] = {}
    order: list[str] = []
    for g in groups:
        for t in g:
            lab = label_of(t)
            if lab not in best:
                order.append(lab)
                best[lab] = t
            elif rank.get(source_of(t), 9) < rank.get(source_of(best[lab]), 9):
                best[lab] = t
    return [best[lab] for lab in order]
