"""nbhelpers' layers: imports only go down, support < formulas < figures and exercises <
widgets."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "nbhelpers"
LAYERS = {"support": 0, "formulas": 1, "figures": 2, "exercises": 2, "widgets": 3}


def layer_of(module: str) -> str:
    """'nbhelpers.figures.heatmap' -> 'figures'; top-level modules and corpus/ are formulas."""
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in LAYERS:
        return parts[1]
    return "formulas"


def modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        name = ".".join(relative.parts).removesuffix(".__init__")
        yield name, path


def imported(name: str, path: Path):
    """The nbhelpers modules that `name` imports (relative imports resolved)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.startswith("nbhelpers"):
                yield target
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.startswith("nbhelpers"))


@pytest.mark.parametrize(("name", "path"), list(modules()), ids=lambda v: str(v))
def test_imports_only_go_down_the_layers(name, path):
    if name == "nbhelpers":  # the package's front door re-exports every layer
        return
    own = LAYERS[layer_of(name)]
    upward = [t for t in imported(name, path) if LAYERS[layer_of(t)] > own]
    assert not upward, f"{name} ({layer_of(name)}) imports from a layer above it: {upward}"


def test_every_layer_is_a_folder_or_the_top_level():
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    # data/ holds files, not code: the small trained model that notebooks 08 and 09 share.
    assert not list((PACKAGE / "data").glob("*.py"))
    assert folders == {"corpus", "data", "exercises", "figures", "support", "widgets"}
