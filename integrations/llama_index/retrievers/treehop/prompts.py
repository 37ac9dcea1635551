"""The intent-analysis prompt as a LlamaIndex ``PromptTemplate`` and back.

treehop keeps its planner prompt as a :class:`string.Template` (``$query``) so that the JSON
example inside it needs no brace escaping. LlamaIndex prompts use ``{query}``; its formatter
replaces only ``{identifier}`` patterns it knows and leaves other braces (the JSON example)
alone, so the conversion is exact in both directions: ``get_prompts()`` shows the prompt the way
LlamaIndex users write prompts, and ``update_prompts()`` accepts it back.
"""

from __future__ import annotations

import re
from string import Template

from llama_index.core.prompts import BasePromptTemplate, PromptTemplate
from llama_index.core.prompts.utils import SafeFormatter

from treehop.errors import InvalidQueryError
from treehop.intent_analysis import PROMPT_PLACEHOLDERS
from treehop.redaction import listed

INTENT_PROMPT_KEY = "intent_analysis"
_VAR = re.compile(r"\{([a-zA-Z_][a-zA-Z0-9_]*)\}")
_IDENT_CHAR = re.compile(r"[A-Za-z0-9_]")


def to_llama_template(template: str) -> str:
    """``$name``/``${name}`` -> ``{name}``, ``$$`` -> ``$``."""

    def repl(m: re.Match[str]) -> str:
        if m.group("escaped") is not None:
            return "$"
        name = m.group("named") or m.group("braced")
        if name is None:
            raise InvalidQueryError(f"invalid '$' in the intent prompt at offset {m.start()}")
        return "{" + name + "}"

    return Template.pattern.sub(repl, template)


def from_llama_template(template: str, partials: dict[str, object] | None = None) -> str:
    """``{name}`` -> ``${name}`` for treehop's placeholders, ``$`` -> ``$$``.

    Partially formatted variables are filled in. An unknown ``{identifier}`` raises, because
    LlamaIndex would treat it as a variable that treehop never fills.
    """
    partials = partials or {}
    names = set(SafeFormatter().parse(template))
    unknown = names - PROMPT_PLACEHOLDERS - set(partials)
    if unknown:
        raise InvalidQueryError(
            f"intent prompt uses unknown variables [{listed(unknown)}]; "
            f"known: {sorted(PROMPT_PLACEHOLDERS)}"
        )
    escaped = template.replace("$", "$$")

    def repl(m: re.Match[str]) -> str:
        name = m.group(1)
        if name in partials:
            return str(partials[name]).replace("$", "$$")
        if name in PROMPT_PLACEHOLDERS:
            # ``$name`` unless an identifier character follows (then ``${name}``), so that
            # treehop's own template survives a round trip unchanged.
            follows = escaped[m.end() : m.end() + 1]
            return "${" + name + "}" if _IDENT_CHAR.match(follows) else "$" + name
        return m.group(0)

    return _VAR.sub(repl, escaped)


def to_prompt(template: str) -> PromptTemplate:
    return PromptTemplate(to_llama_template(template))


def from_prompt(prompt: BasePromptTemplate) -> str:
    """The treehop template of a LlamaIndex prompt (a plain text prompt, not a chat prompt)."""
    if not isinstance(prompt, PromptTemplate):
        raise InvalidQueryError(
            "the intent prompt must be a PromptTemplate (one text prompt), "
            f"got {type(prompt).__name__}"
        )
    if prompt.template_var_mappings or prompt.function_mappings:
        raise InvalidQueryError(
            "the intent prompt cannot use template_var_mappings or function_mappings: "
            "treehop fills the variables itself"
        )
    return from_llama_template(prompt.get_template(), dict(prompt.kwargs))
