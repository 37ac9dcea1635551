"""Builders of ``assemble_context`` 's inputs shared by the context tests: a resource slot
(a matched chunk and the window chunks collapsed under it) and a window chunk, all under
one document folder. One copy, so a change to ``MatchedContext`` / ``ChunkContext`` is made
once for every test that hands slots to the assembler."""

from __future__ import annotations

from treehop.models import ChunkContext, ContextType, MatchedContext

ROOT = "viking://resources/docs"


def ext(doc: str, i: int, position: int, score: float, content: str) -> ChunkContext:
    """Chunk ``i`` of ``doc`` in a slot's window, ``position`` chunks from the slot's hit."""
    return ChunkContext(
        uri=f"{ROOT}/{doc}#chunk-{i}",
        chunk_index=i,
        score=score,
        content=content,
        position=position,
    )


def slot(
    doc: str, i: int, content: str, score: float, exts: list[ChunkContext] | None = None
) -> MatchedContext:
    """Chunk ``i`` of ``doc`` as a matched resource leaf, its window chunks ``exts``."""
    return MatchedContext(
        uri=f"{ROOT}/{doc}#chunk-{i}",
        context_type=ContextType.RESOURCE,
        is_leaf=True,
        abstract="",
        content=content,
        score=score,
        chunk_index=i,
        collapsed=exts or [],
    )
