"""The ir_metadata schema (https://www.ir-metadata.org/metadata/overview/): PRIMAD's sections,
the kind of value each known field takes, and the check of a composed YAML tree against it.

Separate from `tcdb.collections.ir_metadata.description`, which finds the YAML in a run file or
beside it and
reads fields off it, because the schema is data plus one recursive check that knows nothing of
files: it depends on PyYAML's node types only, and the reader depends on it, not the reverse.
Errors are raised through the caller's `error(mark, reason)`, which turns a YAML position into
the file's line.
"""

from __future__ import annotations

import datetime as dt
import difflib
import math
from collections.abc import Iterator
from typing import Any

from tcdb.errors import InputError

# The run's general information, then the six PRIMAD components (the schema's own spelling).
GENERAL = ("schema-version", "run-version", "tag")
SECTIONS = ("platform", "research goal", "implementation", "method", "actor", "data")

# Value kinds of the schema's checklists (https://www.ir-metadata.org/metadata/overview/).
TEXT = "text"  # a scalar (!!str; a number or a date is accepted: `commit: 9548123` is an int)
INT = "int"
BOOL = "bool"
NUMBER = "number"
LIST = "list"  # a sequence of scalars
LIST_OF_MAPS = "list of mappings"
MAP = "mapping"
LIBRARIES = "libraries"  # a sequence of scalars, or one per language (`python: [...]`)

Schema = dict[str, "str | Schema"]
SCHEMA: Schema = {
    "schema-version": TEXT, "run-version": TEXT, "tag": TEXT,
    "platform": {
        "hardware": {
            "cpu": {"model": TEXT, "architecture": TEXT, "operation mode": TEXT,
                    "number of cores": INT},
            "gpu": {"model": TEXT, "architecture": TEXT, "number of cores": INT,
                    "memory": TEXT},
            "ram": TEXT,
        },
        "operating system": {"kernel": TEXT, "distribution": TEXT},
        "software": {"libraries": LIBRARIES, "retrieval toolkit": LIST},
    },
    "research goal": {
        "description": TEXT,
        "venue": {"name": TEXT, "year": INT},
        "publication": {"dblp": TEXT, "doi": TEXT, "arxiv": TEXT, "url": TEXT,
                        "abstract": TEXT},
        "evaluation": {"reported measures": LIST, "reported_measures": LIST, "baseline": LIST,
                       "significance test": LIST_OF_MAPS},
    },
    "implementation": {
        "executable": {"cmd": TEXT},
        "source": {"lang": LIST, "repository": TEXT, "commit": TEXT},
    },
    "method": {
        "automatic": BOOL, "score ties": TEXT, "category": TEXT,
        "indexing": {"tokenizer": TEXT, "stemmer": TEXT, "stopwords": TEXT},
        "retrieval": LIST_OF_MAPS,
    },
    "actor": {"name": TEXT, "orcid": TEXT, "team": TEXT, "fields": LIST, "mail": TEXT,
              "role": TEXT, "degree": TEXT, "github": TEXT, "twitter": TEXT},
    "data": {"test collection": MAP, "training data": LIST_OF_MAPS, "other": LIST_OF_MAPS},
}
# How alike (difflib's ratio) an unknown key and a field must be for the key to be a typo of it:
# `automatc` / `automatic` is 0.94, `descripton` 0.95, `venue` / `value` 0.6.
MISSPELT = 0.85
# A ranking stage of `method` → `retrieval`.
STAGE: Schema = {"name": TEXT, "method": TEXT, "reranks": TEXT, "interpolates": LIST,
                 "ensembles": LIST, "weight": NUMBER}

# `method` → `category` in tcdb's vocabulary (tcdb.vocabulary.RunCategory), with its synonyms.
CATEGORIES = {"lexical": "lexical", "sparse": "lexical", "statistical": "lexical",
              "neural": "neural", "dense": "neural", "llm": "llm", "other": "other"}


def pairs(node: Any, error: Any, where: str) -> Iterator[tuple[str, Any]]:
    """A mapping node's (key, value node) pairs; a key twice is an error (YAML loaders keep the
    last one silently)."""
    import yaml

    seen: set[str] = set()
    for key_node, value in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            raise error(key_node.start_mark, f"{where or 'ir_metadata'}: a key must be text")
        key = str(key_node.value)
        if key in seen:
            raise error(key_node.start_mark, f"{_path(where, key)} is given twice")
        seen.add(key)
        yield key, value


def _path(where: str, key: str) -> str:
    return f"{where} → {key}" if where else key


def check(node: Any, kind: str | Schema, where: str, error: Any) -> None:
    """That a value node has the schema's kind; unknown keys in a known mapping are allowed
    (the schema is extensible: "you can add additional metadata") unless they are one typo away
    from a field of the schema (`automatc`), unknown top-level sections are not."""
    import yaml

    tag = getattr(node, "tag", "")
    if isinstance(node, yaml.ScalarNode) and tag == "tag:yaml.org,2002:null":
        return  # a field left empty: not given
    mark = node.start_mark

    def expect(what: str) -> InputError:
        return error(mark, f"{where} must be {what}")

    if isinstance(kind, dict):
        if not isinstance(node, yaml.MappingNode):
            raise expect("a mapping")
        for key, value in pairs(node, error, where):
            if key in kind:
                check(value, kind[key], _path(where, key), error)
                continue
            close = difflib.get_close_matches(key, list(kind), n=1, cutoff=MISSPELT)
            if close:  # an extension is welcome, a misspelt field is lost: say which it is
                raise error(value.start_mark, f"{_path(where, key)}: not an ir_metadata field "
                            f"(did you mean {close[0]!r}? the fields here are "
                            f"{', '.join(kind)}; other names are taken as extensions)")
        return
    if kind == MAP:
        if not isinstance(node, yaml.MappingNode):
            raise expect("a mapping")
        for _ in pairs(node, error, where):
            pass
        return
    if kind in (LIST, LIST_OF_MAPS, LIBRARIES):
        if kind == LIBRARIES and isinstance(node, yaml.MappingNode):
            for key, value in pairs(node, error, where):
                check(value, LIST, _path(where, key), error)
            return
        if not isinstance(node, yaml.SequenceNode):
            raise expect("a list" if kind != LIST_OF_MAPS else "a list of mappings")
        for index, item in enumerate(node.value, start=1):
            item_where = f"{where} [{index}]"
            if kind == LIST_OF_MAPS:
                if not isinstance(item, yaml.MappingNode):
                    raise error(item.start_mark, f"{item_where} must be a mapping")
                stage = STAGE if where == "method → retrieval" else {}
                check(item, stage, item_where, error)
            elif not isinstance(item, yaml.ScalarNode):
                raise error(item.start_mark, f"{item_where} must be a single value")
        return
    if not isinstance(node, yaml.ScalarNode):
        raise expect("a single value")
    if kind == INT and tag != "tag:yaml.org,2002:int":
        raise expect(f"an integer, not {node.value!r}")
    if kind == BOOL and tag != "tag:yaml.org,2002:bool":
        raise expect(f"true or false, not {node.value!r}")
    if kind == NUMBER and tag not in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float"):
        raise expect(f"a number, not {node.value!r}")
    if where == "method → category" and str(node.value).strip().lower() not in CATEGORIES:
        raise expect(f"one of {', '.join(dict.fromkeys(CATEGORIES.values()))}, not "
                     f"{node.value!r}")


def json_safe(value: Any) -> Any:
    """Parsed YAML as JSON: dates as ISO text, keys as text, non-finite numbers as text."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, set):
        return sorted(str(v) for v in value)
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value
