"""The collection specs shipped with tcdb (`*.yaml`), read by `tcdb.collections.spec`.

A package only so that the YAML files travel with tcdb (editable install or wheel) and are found
with `importlib.resources`; it holds no code.
"""
