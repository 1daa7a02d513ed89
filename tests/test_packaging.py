"""The package as it is installed: every module folder is listed, nothing shadows the standard
library, and the shipped specs travel with it."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _setuptools() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_package_folder_is_listed() -> None:
    """A folder with `__init__.py` under a mapped room that `packages` misses would be left out
    of a built wheel, though an editable install still finds it."""
    config = _setuptools()
    folders: dict[str, str] = config["package-dir"]
    listed = set(config["packages"])
    for root_package, folder in folders.items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            if "__pycache__" in init.parts:
                continue
            relative = init.parent.relative_to(base)
            name = ".".join([root_package, *relative.parts])
            owner = max((p for p in folders if name == p or name.startswith(p + ".")), key=len)
            if owner == root_package:
                assert name in listed, f"{init.parent} holds package {name}, missing from packages"


def test_the_repository_root_does_not_shadow_the_standard_library() -> None:
    """With the root on sys.path (PYTHONPATH=., notebooks, IDEs) `collections` is still the
    standard library's, and tcdb's rooms import."""
    code = ("import collections, json; import tcdb.collections, tcdb.schema, tcdb.flows; "
            "print(collections.__file__)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, env={"PYTHONPATH": str(ROOT), "PATH": ""}, check=True)
    assert Path(result.stdout.strip()).parent.parent != ROOT
    assert "collections" in result.stdout and str(ROOT / "collections") not in result.stdout


def test_shipped_specs_are_found_by_name() -> None:
    from tcdb.collections.spec import list_specs, load_spec

    names = {path.name for path in list_specs()}
    assert {"longeval-web.yaml", "trec-covid.yaml"} <= names
    assert load_spec("longeval-web.yaml").name == "longeval-web"
