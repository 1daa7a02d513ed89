"""The package as it is installed: every module folder is listed, nothing shadows the standard
library, and the shipped specs travel with it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _setup():
    """setup.py's package map, read as the build reads it."""
    spec = importlib.util.spec_from_file_location("tcdb_setup", ROOT / "setup.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_module_is_in_a_found_package() -> None:
    """A module outside the packages the build finds would be left out of a built wheel (an
    editable install might still find it): every `.py` file of a room sits in one of them."""
    setup = _setup()
    folders = setup.package_dirs(ROOT)
    found = setup.packages(ROOT)
    package_folders = set()
    for package in found:
        mapped = max((p for p in folders if package == p or package.startswith(p + ".")), key=len)
        package_folders.add(ROOT / folders[mapped] / Path(*package[len(mapped):].split(".")[1:]))
    rooms = [ROOT / "tcdb", ROOT / "collections"] + [ROOT / folders[name] for name in setup.ROOMS]
    for room in rooms:
        for module in room.rglob("*.py"):
            if "__pycache__" not in module.parts:
                assert module.parent in package_folders, f"{module}: in no found package"
    assert {"tcdb.collections", "tcdb.collections.documents", "tcdb.collections.specs",
            "tcdb.schema", "tcdb.migrations.versions", "tcdb.dashboard.views"} <= set(found)


def test_every_found_package_imports() -> None:
    """The installed map and the found list agree: each package imports under its name."""
    code = ("import importlib, sys; "
            "[importlib.import_module(name) for name in sys.argv[1:]]")
    result = subprocess.run([sys.executable, "-c", code, *_setup().packages(ROOT)],
                            capture_output=True, text=True, cwd="/")
    assert result.returncode == 0, result.stderr


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
    from tcdb.collections.specs.spec import list_specs, load_spec

    names = {path.name for path in list_specs()}
    assert {"longeval-web.yaml", "trec-covid.yaml"} <= names
    assert load_spec("longeval-web.yaml").name == "longeval-web"
