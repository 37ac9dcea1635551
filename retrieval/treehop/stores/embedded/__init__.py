"""The default store (moving into parts; see the next commit)."""

from .search_paths import DEFAULT_ANN_MIN_ROWS, EmbeddedStore

__all__ = ["DEFAULT_ANN_MIN_ROWS", "EmbeddedStore"]
