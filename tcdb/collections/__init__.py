"""tcdb.collections — the field's files and sources, read and written.

The code lives in the repository's root folder `collections/`, one sub-package per kind of file
(`documents`, `topics`, `qrels`, `runs`, `scores`, `ir_metadata`, `assessor_forms`,
`results_tables`), `sources` (the snapshots' sources and the records they yield), `files` (what
every reader shares) and `specs` (collection specs). `setup.py` maps each folder to
`tcdb.collections.<folder>`. This package has no code of its own: the root folder holds no
`__init__.py`, so that with the root on `sys.path` `collections` stays the standard library's.
"""
