"""Stage 4: tag hops -- sideways jumps into subtrees whose summaries missed the query.

Vertical search cannot reach a subtree whose L0/L1 summary is far from the query, however
relevant its content. Tags written at ingest are a bridge: collect the tags of the global hits,
look up (a scalar lookup, not another vector search) directories that carry them but were not
hit, and push them onto the heap with a down-weighted starting score. Caps on tags and subtrees
keep the search from exploding; the ON_DEMAND trigger runs hops only when the global hits sit in
one subtree, which is when a sideways view is most likely missing.

Tag evidence (:func:`gather_tag_evidence`, :class:`TagEvidence`): with an exact global step a
hop only reaches nodes the global search already scored, with the same vector scores, so a hop
*start* never changes a ranking. For hops to matter, the tags must enter the score: the tags of
the global hits are weighted by how much hit score carries them and by how rare they are in
the scope (a tag that half the tree carries says nothing), leaves carrying those tags are
looked up (a scalar lookup) and scored, and every collected leaf's final score gains
``tag_evidence_weight x (best hit's score) x (its share of the tag weight)``: pseudo-relevance
feedback through the tags written at ingest. Weight 0 leaves every ranking as it was.

Measured (``bench/bench_tag_evidence.py``): it does not make hops matter on the four benchmark
trees. Answers under a directory whose vector ranks far from the query are not the ones find()
misses (the exact global step scores every leaf: Django far R@10 0.913 vs 0.927 ordinary), and
where it misses, the answer rarely shares a rare tag with the hits (22% of the missed far
Django queries, vague link-text queries; 53% on LoCoMo), or, where it does (Cranfield 97%),
so do many non-relevant leaves. The term stays opt-in (default weight 0).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from operator import itemgetter

from . import tags as tagmod
from . import uri as urimod
from .config import RetrievalConfig, TagHopTrigger
from .descent import Candidate, Score
from .models import TagHopMetrics, assign, tag_hop_metrics
from .stores.base import Scope, ScoredNode, VectorStore

# Inherited tags say where a node sits, not what it is about; hopping on them would only lead
# back into the subtree they came from, so they do not seed hops.
_HOP_SOURCES = ("user", "auto", "llm")


@dataclass(frozen=True)
class HopStart:
    """A directory added to the heap by a tag hop.

    It carries no score: the retriever starts it at ``tag_hop_score_factor`` times the
    source hit's :class:`~treehop.descent.Score`, both tracks scaled alike, so a hop start can
    never put a vector-scale number on the rerank track.
    """

    uri: str
    tag: str
    source: str  # the global hit whose tag led here


def subtree_key(uri: str, roots: Sequence[str]) -> str:
    """The first-level subtree below the search root that ``uri`` belongs to."""
    return _subtree_key(uri, _child_marks(roots))


def _child_marks(roots: Sequence[str]) -> list[tuple[str, tuple[str, str]]]:
    """Each root with its :func:`~treehop.uri.child_prefixes`, made once for many URIs."""
    return [(root, urimod.child_prefixes(root)) for root in roots]


def _subtree_key(uri: str, marks: Sequence[tuple[str, tuple[str, str]]]) -> str:
    """:func:`subtree_key` with each root's two child prefixes made once (``marks``)."""
    for root, inside in marks:
        if uri.startswith(inside):  # (inside the root, not the root)
            rest = uri[len(root) + 1 :]
            head = rest.split("/", 1)[0].split("#", 1)[0]
            return f"{root}/{head}"
    return uri


def effective_root(store: VectorStore, root: str, max_depth: int = 8) -> str:
    """Skip single-child chains below a root (``resources/`` holding one folder), so that
    "one subtree" means one branch of a real fork in the tree."""
    cur = root
    # A store that counts children without building them (an optional capability) skips
    # the nodes of a root with many children: every find asks this of its roots, and a 1M
    # tree's root built ~200 nodes per find to learn that it forks.
    count: Callable[[str], int] | None = getattr(store, "child_count", None)
    for _ in range(max_depth):
        if count is not None and count(cur) != 1:
            break
        children = store.children(cur)
        kids = [c for c in children if not c.is_leaf]
        if len(kids) != 1 or len(children) != 1:
            break
        cur = kids[0].uri
    return cur


def concentration(hits: Sequence[ScoredNode], roots: Sequence[str]) -> tuple[float, str]:
    """Share of global hits in the most common first-level subtree, and that subtree (the
    first one counted among equals, as ``Counter.most_common`` gives)."""
    if not hits:
        return 0.0, ""
    counts: dict[str, int] = {}
    get = counts.get
    marks = _child_marks(roots)
    for h in hits:
        key = _subtree_key(h.node.uri, marks)
        counts[key] = get(key, 0) + 1
    top, n = max(counts.items(), key=itemgetter(1))
    return n / len(hits), top


def plan_tag_hops(
    store: VectorStore,
    hits: Sequence[ScoredNode],
    roots: Sequence[str],
    scope: Scope,
    cfg: RetrievalConfig,
) -> tuple[list[HopStart], TagHopMetrics]:
    metrics = tag_hop_metrics()
    if cfg.tag_hop_trigger is TagHopTrigger.OFF or cfg.tag_hop_max_subtrees == 0 or not hits:
        metrics.trigger_reason = "off" if cfg.tag_hop_trigger is TagHopTrigger.OFF else "no hits"
        return [], metrics
    roots = [effective_root(store, r) for r in roots]
    share, top_subtree = concentration(hits, roots)
    if cfg.tag_hop_trigger is TagHopTrigger.ON_DEMAND:
        if share < cfg.tag_hop_concentration:
            metrics.trigger_reason = (
                f"hits spread: {share:.0%} in one subtree < {cfg.tag_hop_concentration:.0%}"
            )
            return [], metrics
        assign(metrics, trigger_reason=f"{share:.0%} of hits in {top_subtree}")
    else:
        assign(metrics, trigger_reason="always")
    assign(metrics, triggered=True)

    # Rank the hits' tags by how much score carries them; remember the best hit per tag.
    weight, best_hit = _hit_tag_mass(hits)
    labels = sorted(weight, key=lambda lab: (-weight[lab], lab))[: cfg.tag_hop_max_tags]
    assign(metrics, tags_used=labels)
    if not labels:
        return [], metrics
    metrics.hops_tried = len(labels)

    hit_subtrees = {subtree_key(h.node.uri, roots) for h in hits}
    lookup_scope = replace(
        scope,
        subtrees=tuple(roots),
        non_leaves_only=True,
        traversal=False,
        exclude_uris=frozenset(h.node.uri for h in hits),
    )
    found = store.find_by_tags(labels, lookup_scope, limit=max(50, cfg.tag_hop_max_subtrees * 10))
    starts: list[HopStart] = []
    chosen_subtrees: set[str] = set()
    for lab in labels:
        candidates = sorted(found.get(lab, []), key=lambda n: (n.uri.count("/"), n.uri))
        for node in candidates:
            st = subtree_key(node.uri, roots)
            if st in hit_subtrees or st in chosen_subtrees or node.uri in roots:
                continue
            starts.append(HopStart(uri=node.uri, tag=lab, source=best_hit[lab].node.uri))
            chosen_subtrees.add(st)
            if len(starts) >= cfg.tag_hop_max_subtrees:
                break
        if len(starts) >= cfg.tag_hop_max_subtrees:
            break
    metrics.subtrees_added = [s.uri for s in starts]
    return starts, metrics


RARITY_WINDOW = 64
"""A tag's rarity is read from how many leaves in scope carry it, counted up to this many:
weight ``log((RARITY_WINDOW + 1) / df)``, so a tag carried by this many leaves or more weighs
nothing (it connects too much of the tree to be evidence), and a tag only the source hit
carries is no bridge either (it is dropped: df counts the hit itself)."""


@dataclass(frozen=True)
class TagEvidence:
    """The tag weights of one query: label -> share of the evidence (the shares sum to 1).

    ``scale`` is the best global hit's own score, so that the term is on the store's scale
    (a cosine or the hybrid blend) and means the same on every tree.
    """

    weights: Mapping[str, float] = field(default_factory=dict)
    scale: float = 0.0
    sources: Mapping[str, str] = field(default_factory=dict)
    """label -> the global hit that carried it most (the hop's provenance)."""

    def share(self, tags: Iterable[str]) -> float:
        """The share of the query's tag weight a node's own (non-inherited) tags carry."""
        w = self.weights
        return sum(
            w.get(tagmod.label_of(t), 0.0) for t in tags if tagmod.source_of(t) in _HOP_SOURCES
        )

    def boost(self, tags: Iterable[str], weight: float) -> float:
        """What the term adds to a leaf's final score."""
        if weight <= 0.0 or not self.weights:
            return 0.0
        return weight * self.scale * self.share(tags)


@dataclass(frozen=True)
class HopLeaf:
    """A leaf reached through a tag, scored, with the tag and the global hit that led to it."""

    hit: ScoredNode
    tag: str
    source: str


def _hit_tag_mass(hits: Sequence[ScoredNode]) -> tuple[dict[str, float], dict[str, ScoredNode]]:
    """Per label: the summed (non-negative) score of the hits carrying it, and its best hit."""
    mass: dict[str, float] = defaultdict(float)
    best_hit: dict[str, ScoredNode] = {}
    for h in hits:
        for t in h.node.tags:
            if tagmod.source_of(t) not in _HOP_SOURCES:
                continue
            lab = tagmod.label_of(t)
            mass[lab] += max(h.score, 0.0)
            if lab not in best_hit or h.score > best_hit[lab].score:
                best_hit[lab] = h
    return mass, best_hit


def gather_tag_evidence(
    store: VectorStore,
    hits: Sequence[ScoredNode],
    roots: Sequence[str],
    scope: Scope,
    cfg: RetrievalConfig,
    search: Callable[[Scope, int], list[ScoredNode]],
    limit: int,
) -> tuple[TagEvidence, list[HopLeaf]]:
    """The query's tag evidence and the best leaves it reaches that the hits do not hold.

    ``search(scope, n)`` scores nodes for this query (the retriever's own search, same
    weights). The leaves carrying the ``2 x tag_hop_max_tags`` heaviest tags of the hits are
    looked up (at most :data:`RARITY_WINDOW` per tag, which also gives each tag's rarity),
    scored in one search, and the ``2 x limit`` best by own score plus evidence are returned.
    """
    mass, best_hit = _hit_tag_mass(hits)
    if not mass or cfg.tag_evidence_weight <= 0.0:
        return TagEvidence(), []
    labels = sorted(mass, key=lambda lab: (-mass[lab], lab))[: 2 * max(cfg.tag_hop_max_tags, 1)]
    leaf_scope = replace(
        scope, subtrees=tuple(roots), leaves_only=True, traversal=False, exclude_uris=frozenset()
    )
    found = store.find_by_tags(labels, leaf_scope, limit=RARITY_WINDOW)
    raw: dict[str, float] = {}
    for lab in labels:
        df = len(found.get(lab, []))
        if 2 <= df < RARITY_WINDOW:
            raw[lab] = mass[lab] * math.log((RARITY_WINDOW + 1) / df)
    total = sum(raw.values())
    if total <= 0.0:
        return TagEvidence(), []
    top = max(h.score for h in hits)
    ev = TagEvidence(
        {lab: v / total for lab, v in raw.items()},
        max(top, 0.0),
        {lab: best_hit[lab].node.uri for lab in raw},
    )
    seen = {h.node.uri for h in hits}
    via: dict[str, str] = {}
    for lab in sorted(raw, key=lambda lab: -raw[lab]):
        for n in found.get(lab, []):
            if n.uri not in seen and n.uri not in via:
                via[n.uri] = lab
    if not via:
        return ev, []
    scored = search(replace(leaf_scope, subtrees=tuple(sorted(via))), len(via))
    w = cfg.tag_evidence_weight
    scored = [h for h in scored if h.node.uri in via and h.node.is_leaf]
    scored.sort(key=lambda h: -(h.score + ev.boost(h.node.tags, w)))
    return ev, [
        HopLeaf(h, via[h.node.uri], ev.sources[via[h.node.uri]]) for h in scored[: 2 * limit]
    ]


def apply_tag_evidence(candidates: Iterable[Candidate], ev: TagEvidence, weight: float) -> None:
    """Add the tag term to every collected leaf's final score (vector track; a directory, which
    is ranked by its own summary, keeps its score)."""
    for c in candidates:
        if c.node.is_leaf:
            b = ev.boost(c.node.tags, weight)
            if b:
                c.final = Score(c.final.vec + b, c.final.rr)
