"""A snapshot source's identity without reading its data: file names, sizes and mtimes.

Ingest stores it with the snapshot, to refuse "a different source under the same label" and to
know that the same source again changes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from tcdb.collections.documents.trec import iter_document_files


def file_fingerprint(kind: str, groups: Iterable[tuple[str, Path | str | None]]) -> str:
    """sha256 over the kind and, per named group, each file's (relative path, size, mtime_ns).

    A group is a file or a directory (its files, recursively, relative to it), or a string token
    hashed as given; paths are relative so that moving a collection keeps its identity, while any
    edit (size or mtime) changes it.
    """
    digest = hashlib.sha256(kind.encode())
    for name, root in groups:
        digest.update(b"\0group\0" + name.encode())
        if root is None:
            continue
        if isinstance(root, str):
            digest.update(b"\0token\0" + root.encode())
            continue
        files = list(iter_document_files(root)) if root.is_dir() else [root]
        for file in files:
            rel = file.relative_to(root).as_posix() if root.is_dir() else file.name
            stat = file.stat()
            digest.update(f"\0{rel}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    return digest.hexdigest()
