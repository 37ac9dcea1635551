"""Writing tags at ingest: automatic keywords, user tags, and inheritance down the tree.

The keyword statistics (document frequencies over the index's leaves) persist with the index,
so that a later ``add_resource`` or a backfill sees the whole corpus, not one batch.

Which tags a node gets:

- ``user:`` tags given to ``add_resource`` (and kept across re-tagging);
- ``auto:`` keywords: extracted from a leaf's content; for a directory, its own abstract's
  keywords plus the most shared keywords of its children (so that a hop, which looks up
  directories, can reach a topic that lives only in the content below);
- ``inherit:`` tags: a directory's user tags and its *own* keywords, passed down to every
  descendant (the seed's "L0 tags propagate to children"). Keywords a directory only
  aggregated from its children are not passed back down to their siblings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .. import tags as tagmod
from ..ingest.summaries import humanize, is_readme
from ..models import Node
from ..stores.base import VectorStore
from .base import NodeTags
from .keywords import KeywordTagger, _parsed_tag

STATE_KEY = "tagger/keywords.bin"
DELTA_KEY = "tagger/keywords-delta.bin"
"""What was counted since ``STATE_KEY`` was written (``KeywordTagger.state_delta``): a small
write saves a delta instead of rewriting every term's statistics."""
LEGACY_STATE_KEY = "tagger/keywords.json"
"""Where indexes written before the compact format keep the statistics (read, not written)."""


class IngestTagger:
    """Keeps a :class:`KeywordTagger` fitted on the index and tags batches of nodes."""

    def __init__(self, tagger: KeywordTagger | None = None) -> None:
        self._template = tagger
        self._tagger: KeywordTagger | None = None

    def _get(self, store: VectorStore) -> KeywordTagger:
        if self._tagger is None:
            raw = store.get_state(STATE_KEY)
            if raw:
                self._tagger = KeywordTagger.from_bytes(raw)
                delta = store.get_state(DELTA_KEY)
                if delta:
                    self._tagger.apply_delta(delta)
            elif raw := store.get_state(LEGACY_STATE_KEY):
                self._tagger = KeywordTagger.from_bytes(raw)
            elif self._template is not None:
                self._tagger = KeywordTagger(**self._template.params())
            else:
                self._tagger = KeywordTagger()
        return self._tagger

    def _save(self, store: VectorStore) -> None:
        assert self._tagger is not None
        delta = self._tagger.state_delta()
        if delta is not None:
            store.put_state(DELTA_KEY, delta)
            return
        # A new base, then the old delta cleared: a stop in between leaves a delta of the old
        # base, which the next load ignores (the new base already holds it).
        store.put_state(STATE_KEY, self._tagger.full_state())
        store.put_state(DELTA_KEY, b"")

    def tag_nodes(
        self, nodes: Sequence[Node], store: VectorStore, new_texts: Sequence[str] | None = None
    ) -> dict[str, NodeTags]:
        """Automatic tags for ``nodes``; ``new_texts`` (leaf texts not yet counted) update the
        corpus statistics first. Returns uri -> :class:`NodeTags`.

        A directory in ``nodes`` whose other children are already stored (an incremental
        re-add sends only what changed) aggregates their stored ``auto:`` tags too.
        """
        tagger = self._get(store)
        leaves = [n for n in nodes if n.is_leaf]
        texts = [n.embedding_text() for n in leaves]
        if new_texts is None:
            new_texts = texts
        labels = tagger.partial_fit_extract(list(new_texts), texts) if texts or new_texts else []
        if new_texts:
            self._save(store)
        return self._compute(tagger, nodes, leaves, labels, store)

    def refit(self, store: VectorStore) -> None:
        """Recount the statistics over every leaf of the index (used by the backfill)."""
        tagger = self._get(store)
        tagger.fit([n.embedding_text() for n in store.iter_nodes() if n.is_leaf])
        self._save(store)

    def _compute(
        self,
        tagger: KeywordTagger,
        nodes: Sequence[Node],
        leaves: Sequence[Node],
        labels: Sequence[list[str]],
        store: VectorStore,
    ) -> dict[str, NodeTags]:
        out: dict[str, NodeTags] = {}
        # The labels behind each node's ``auto:`` tags, for its directory's aggregation.
        auto_labels: dict[str, Sequence[str]] = {}
        # Extracted labels are normalised already: the tags are built without re-checking.
        for n, labs in zip(leaves, labels, strict=True):
            out[n.uri] = NodeTags(auto=[f"auto:{lab}" for lab in labs], own_labels=list(labs))
            auto_labels[n.uri] = labs
        children: dict[str, list[str]] = {}
        for n in nodes:
            if n.parent_uri is not None:
                children.setdefault(n.parent_uri, []).append(n.uri)
        dirs = sorted((n for n in nodes if not n.is_leaf), key=lambda n: -n.uri.count("/"))
        own_texts = [_own_text(d, children.get(d.uri, [])) for d in dirs]
        wanted = [t for t in own_texts if t]
        own_of = dict(zip(wanted, tagger.extract_many(wanted), strict=True)) if wanted else {}
        for d, own_text in zip(dirs, own_texts, strict=True):
            own = own_of[own_text] if own_text else []
            kids = children.get(d.uri, [])
            kid_labels = [auto_labels[c] for c in kids if c in out]
            kid_labels += _stored_auto_labels(store, d.uri, out)
            agg = tagger.aggregate_labels(kid_labels, own)
            out[d.uri] = NodeTags(auto=[f"auto:{lab}" for lab in agg], own_labels=list(own))
            auto_labels[d.uri] = agg
        return out


def _own_text(d: Node, kids: Sequence[str]) -> str:
    """A directory's own words: its README's abstract when it has one; otherwise only its
    name (an abstract listing its children's titles would hand each child's topic down to
    all of its siblings). Roots and the implicit directories above an added resource
    ("resources", "memories") describe the storage layout, not a topic: they get none."""
    if d.level == 0 or bool(d.metadata.get("implicit")):
        return ""
    has_readme = any(is_readme(c.rsplit("/", 1)[-1]) for c in kids)
    return d.abstract if has_readme else humanize(d.uri.rsplit("/", 1)[-1])


def _stored_auto_labels(
    store: VectorStore, uri: str, fresh: Mapping[str, NodeTags]
) -> list[list[str]]:
    """Labels of the ``auto:`` tags of ``uri``'s stored children that this batch does not
    rewrite (parsed as :meth:`KeywordTagger.aggregate` parses tags; distinct per child)."""
    return [
        list(dict.fromkeys(_parsed_tag(t).partition(":")[2] for t in auto))
        for kid in store.children(uri)
        if kid.uri not in fresh and (auto := [t for t in kid.tags if t.startswith("auto:")])
    ]


def assign_tags(
    nodes: Sequence[Node],
    computed: Mapping[str, NodeTags],
    user_tags: Mapping[str, list[str]],
    inherited_from_outside: Mapping[str, list[str]] | None = None,
) -> None:
    """Set ``node.tags`` = user + auto + inherited (top-down), in place.

    ``inherited_from_outside``: inheritable labels of parents that are not in ``nodes`` (when
    re-tagging a subtree whose ancestors keep their tags).
    """
    inheritable: dict[str, list[str]] = dict(inherited_from_outside or {})
    for n in sorted(nodes, key=lambda x: x.uri.count("/") + (1 if "#" in x.uri else 0)):
        users = user_tags.get(n.uri, [])
        got = computed.get(n.uri)
        auto = got.auto if got is not None else []
        parent_labels = inheritable.get(n.parent_uri or "", [])
        # Inheritable labels are normalised (user tags by parse_tags, own labels by the
        # tagger), so the tag is built without normalising again.
        fast = None if users else _plain_auto(auto)
        if fast is not None:
            # Only ``auto:`` tags of distinct labels: the merge keeps them all, in order,
            # then the inherited labels they do not carry (auto outranks inherit).
            n.tags = list(auto)
            for lab in parent_labels:
                if lab not in fast:
                    fast.add(lab)
                    n.tags.append(f"inherit:{lab}")
        else:
            own = tagmod.merge(users, auto)
            n.tags = tagmod.merge(own, [f"inherit:{lab}" for lab in parent_labels])
        mine = [tagmod.label_of(t) for t in users]
        if got is not None:
            mine += got.own_labels
        if not n.is_leaf:
            inheritable[n.uri] = tagmod.dedupe([*parent_labels, *mine])


def _plain_auto(auto: Sequence[str]) -> set[str] | None:
    """The labels of ``auto`` when every tag is ``auto:<label>`` and no label repeats (what
    :class:`IngestTagger` writes); None otherwise (another tagger's tags take the merge)."""
    labs = {t[5:] for t in auto if t.startswith("auto:")}
    return labs if len(labs) == len(auto) and all(":" not in x for x in labs) else None
