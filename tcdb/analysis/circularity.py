"""Circularity: a run that uses the judge's own model family, ranked under that judge's labels.

An LLM judge rates documents the way a ranker built on the same model ranks them, so the systems
built on the judge's family gain under its qrels (Clarke & Dietz, "LLM-based relevance
assessment still can't replace human relevance assessment", 2024; Alaofi et al., 2024). The
field's remedy is to say so beside every figure that ranks such a run under such qrels.

The model family is the model's name without its provider (`openai/`, `meta-llama/`) and its
version (`gpt-4o-2024-08-06` → `gpt`, `Llama-3.1-70B-Instruct` → `llama`, `qwen2.5:72b` →
`qwen`); families known under several names (`mistral`/`mixtral`, `gpt`/`chatgpt`/`o1`…) are
one. A run names it when a word of its ir_metadata (or description) starts with one of the
family's names (`GPT-4o`, `gpt4`, `ChatGPT` for `gpt`), so a run that says nothing of its
models is never flagged, and one that does is flagged for each judge of its family.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# families whose models go by more than one name (each name lower-case, as a word's start)
FAMILIES: dict[str, tuple[str, ...]] = {
    "gpt": ("gpt", "chatgpt", "o1-", "o3-", "o4-", "text-davinci", "davinci"),
    "llama": ("llama", "codellama", "vicuna"),
    "mistral": ("mistral", "mixtral", "ministral", "codestral"),
    "qwen": ("qwen", "qwq"),
    "gemini": ("gemini",),
    "gemma": ("gemma",),
    "claude": ("claude",),
    "deepseek": ("deepseek",),
    "phi": ("phi-", "phi3", "phi4"),
    "t5": ("t5", "flan-t5", "monot5", "rankt5", "duot5"),
    "command": ("command-r",),
}
# words that start like a family's name and are no model (a framework, a library)
NOT_MODELS = ("llamaindex", "llama-index", "llama.cpp", "llama-cpp")
_WORD = re.compile(r"[a-z0-9][a-z0-9._:+-]*")


def model_family(model: str) -> str:
    """The family of a model by its name (module docstring); the name's first letters when
    no known family matches (`falcon-40b` → `falcon`)."""
    name = model.strip().lower().rsplit("/", 1)[-1].replace("_", "-").replace(" ", "-")
    for family, names in FAMILIES.items():
        if any(name.startswith(n) for n in names):
            return family
    match = re.match(r"[a-z]+", name)
    return match.group(0) if match else name


def names_family(texts: Iterable[str], family: str) -> str | None:
    """The first word of `texts` that names a model of `family`, or None."""
    names = FAMILIES.get(family, (family,))
    for text in texts:
        for word in _WORD.findall(text.lower().replace("_", "-")):
            last = word.rsplit("/", 1)[-1]
            if last.startswith(NOT_MODELS):
                continue
            if any(last.startswith(n) for n in names) and model_family(last) == family:
                return word
    return None


def strings_in(value: object) -> Iterable[str]:
    """Every string in a parsed YAML/JSON value (keys too: `gpt-4o: {temperature: 0}`)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings_in(item)


@dataclass(frozen=True)
class Circular:
    """A run that names its judge's model family."""

    snapshot: str
    run: str
    qrels: str  # the LLM-judged qrels set it is ranked under
    model: str  # the judge's model
    family: str
    named_as: str  # the word of the run's description that names the family
