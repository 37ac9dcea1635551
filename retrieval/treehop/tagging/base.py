"""The tagger extension point: what the client asks of any automatic tagger at ingest."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..models import Node
from ..stores.base import VectorStore


@dataclass
class NodeTags:
    auto: list[str]
    """``auto:`` tags of the node."""
    own_labels: list[str]
    """Labels that describe the node itself (inheritable by its descendants)."""


@runtime_checkable
class Tagger(Protocol):
    """The extension point for automatic tags written at ingest.

    The client calls :meth:`tag_nodes` with every node of an ``add_resource`` call (leaves and
    directories) and merges the result with user tags and inheritance (:func:`assign_tags`);
    :meth:`refit` is called by ``retag()`` before a backfill. ``auto`` labels become
    ``auto:<label>`` tags; ``own_labels`` are what a directory hands down to its descendants.
    :class:`IngestTagger` (TF-IDF keywords with persisted corpus statistics) is the default.
    """

    def tag_nodes(
        self, nodes: Sequence[Node], store: VectorStore, new_texts: Sequence[str] | None = None
    ) -> dict[str, NodeTags]: ...

    def refit(self, store: VectorStore) -> None: ...
