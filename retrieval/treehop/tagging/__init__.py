"""Automatic tags: the :class:`Tagger` protocol and the taggers behind it.

- :mod:`.base` -- the extension point (:class:`Tagger`, :class:`NodeTags`);
- :mod:`.keywords` -- :class:`KeywordTagger`, corpus-aware TF-IDF / TextRank keywords;
- :mod:`.ingest` -- :class:`IngestTagger`, the default tagger (keywords with corpus statistics
  persisted with the index) and :func:`assign_tags` (user + automatic + inherited tags);
- :mod:`.llm_tagger` -- :class:`LLMTagger`, optional ``llm:`` tags from a chat model, falling
  back to the automatic tags.

The tag *format* (``source:label``) lives in :mod:`treehop.tags`, used by stores and filters
alike; the search side of tags (hops) in :mod:`treehop.tag_hops`.
"""

from .base import NodeTags, Tagger
from .ingest import IngestTagger, assign_tags
from .keywords import (
    EN_STOPWORDS,
    METHODS,
    ZH_STOPWORDS,
    KeywordTagger,
    TaggerError,
    TaggerNotFittedError,
    auto_tags,
    propagate,
    tokenize,
)
from .llm_tagger import LLMTagger

__all__ = [
    "EN_STOPWORDS",
    "METHODS",
    "ZH_STOPWORDS",
    "IngestTagger",
    "KeywordTagger",
    "LLMTagger",
    "NodeTags",
    "Tagger",
    "TaggerError",
    "TaggerNotFittedError",
    "assign_tags",
    "auto_tags",
    "propagate",
    "tokenize",
]
