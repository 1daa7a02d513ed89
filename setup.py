"""The package map and package list of tcdb, found from the folders, not kept by hand.

The design card fixes the rooms at the repository's root (`schema/ flows/ dashboard/ migrations/
collections/`) beside the core `tcdb/`; each is installed as `tcdb.<room>`. `collections/` holds
no `__init__.py` (with the root on `sys.path` a package there would shadow the standard library's
`collections`), so each of its folders is mapped on its own, as `tcdb.collections.<folder>`.
Everything else (metadata, dependencies, package data) is in pyproject.toml.

`tools/typecheck.py` and `tests/test_packaging.py` read the same map from here.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent
ROOMS = {"tcdb": "tcdb", "tcdb.schema": "schema", "tcdb.flows": "flows",
         "tcdb.dashboard": "dashboard", "tcdb.migrations": "migrations"}


def package_dirs(root: Path = ROOT) -> dict[str, str]:
    """Package name → folder (relative to the root) for every mapped room."""
    found = dict(ROOMS)
    for folder in sorted((root / "collections").iterdir()):
        if (folder / "__init__.py").is_file():
            found[f"tcdb.collections.{folder.name}"] = f"collections/{folder.name}"
    return found


def packages(root: Path = ROOT) -> list[str]:
    """Every package under the map: each mapped folder and the folders with `__init__.py` below."""
    from setuptools import find_packages

    found = []
    for name, folder in package_dirs(root).items():
        found += [name, *(f"{name}.{sub}" for sub in find_packages(str(root / folder)))]
    return sorted(found)


if __name__ == "__main__":
    from setuptools import setup

    setup(package_dir=package_dirs(), packages=packages())
