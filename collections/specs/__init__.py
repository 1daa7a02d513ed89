"""Collection specs: `spec.py` reads them; the specs shipped with tcdb are the `*.yaml` files
beside it, found with `importlib.resources` (editable install or wheel).
"""
