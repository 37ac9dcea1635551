"""Stage 4: tag hops -- sideways jumps into subtrees whose summaries missed the query.

Vertical search cannot reach a subtree whose L0/L1 summary is far from the query, however
relevant its content. Tags written at ingest are a bridge: collect the tags of the global hits,
look up (a scalar lookup, not another vector search) directories that carry them but were not
hit, and push them onto the heap with a down-weighted starting score. Caps on tags and subtrees
keep the search from exploding; the ON_DEMAND trigger runs hops only when the global hits sit in
one subtree, which is when a sideways view is most likely missing.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

from . import tags as tagmod
from . import uri as urimod
from .config import RetrievalConfig, TagHopTrigger
from .models import TagHopMetrics
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
    for root in roots:
        if urimod.is_within(uri, root) and uri != root:
            rest = uri[len(root) + 1 :]
            head = rest.split("/", 1)[0].split("#", 1)[0]
            return f"{root}/{head}"
    return uri


def effective_root(store: VectorStore, root: str, max_depth: int = 8) -> str:
    """Skip single-child chains below a root (``resources/`` holding one folder), so that
    "one subtree" means one branch of a real fork in the tree."""
    cur = root
    for _ in range(max_depth):
        kids = [c for c in store.children(cur) if not c.is_leaf]
        if len(kids) != 1 or any(c.is_leaf for c in store.children(cur)):
            break
        cur = kids[0].uri
    return cur


def concentration(hits: Sequence[ScoredNode], roots: Sequence[str]) -> tuple[float, str]:
    """Share of global hits in the most common first-level subtree, and that subtree."""
    if not hits:
        return 0.0, ""
    counts = Counter(subtree_key(h.node.uri, roots) for h in hits)
    top, n = counts.most_common(1)[0]
    return n / len(hits), top


def plan_tag_hops(
    store: VectorStore,
    hits: Sequence[ScoredNode],
    roots: Sequence[str],
    scope: Scope,
    cfg: RetrievalConfig,
) -> tuple[list[HopStart], TagHopMetrics]:
    metrics = TagHopMetrics()
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
        metrics.trigger_reason = f"{share:.0%} of hits in {top_subtree}"
    else:
        metrics.trigger_reason = "always"
    metrics.triggered = True

    # Rank the hits' tags by how much score carries them; remember the best hit per tag.
    weight: dict[str, float] = defaultdict(float)
    best_hit: dict[str, ScoredNode] = {}
    for h in hits:
        for t in h.node.tags:
            if tagmod.source_of(t) not in _HOP_SOURCES:
                continue
            lab = tagmod.label_of(t)
            weight[lab] += max(h.score, 0.0)
            if lab not in best_hit or h.score > best_hit[lab].score:
                best_hit[lab] = h
    labels = sorted(weight, key=lambda lab: (-weight[lab], lab))[: cfg.tag_hop_max_tags]
    metrics.tags_used = labels
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
