"""nbhelpers' layers: imports only go down, support < formulas < experiments < figures <
widgets and exercises; below the figures, nothing imports plotting or widgets; and
`import nbhelpers` is cheap."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "nbhelpers"
LAYERS = {
    "support": 0,
    "formulas": 1,
    "experiments": 2,
    "figures": 3,
    "widgets": 4,
    "exercises": 4,
}


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


MODULE_NAMES = {name for name, _ in modules()}


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
                # `from . import training_loop` imports the module nbhelpers.<...>.training_loop
                yield from (
                    f"{target}.{alias.name}"
                    for alias in node.names
                    if f"{target}.{alias.name}" in MODULE_NAMES
                )
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
    # data/ holds files, not code: the small trained model that notebooks 08, 09 and 10 share.
    assert not list((PACKAGE / "data").glob("*.py"))
    # locale/ holds the translations, gettext catalogues (support/language.py reads them).
    assert not list((PACKAGE / "locale").rglob("*.py"))
    assert folders == {
        "corpus",
        "data",
        "locale",
        "exercises",
        "experiments",
        "figures",
        "support",
        "widgets",
    }


def third_party(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            yield node.module.split(".")[0]
        elif isinstance(node, ast.Import):
            yield from (a.name.split(".")[0] for a in node.names)


@pytest.mark.parametrize(("name", "path"), list(modules()), ids=lambda v: str(v))
def test_below_the_figures_nothing_imports_plotting_or_widgets(name, path):
    if name == "nbhelpers" or LAYERS[layer_of(name)] >= LAYERS["figures"]:
        return
    drawing = {"matplotlib", "matplotlib_fontja", "ipywidgets"} & set(third_party(path))
    assert not drawing, f"{name} ({layer_of(name)}) imports {sorted(drawing)}"


def test_importing_the_package_and_its_formulas_loads_no_plotting():
    import subprocess
    import sys

    code = (
        "import sys, nbhelpers; nbhelpers.attention; nbhelpers.GPT1; nbhelpers.softmax; "
        "import nbhelpers.multihead, nbhelpers.kv_cache; "
        "print(sorted(m for m in ('matplotlib', 'ipywidgets') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_a_name_is_imported_on_first_use_and_every_export_resolves():
    import nbhelpers

    for name in nbhelpers.__all__:
        assert getattr(nbhelpers, name) is not None, name
    assert callable(nbhelpers.attention)  # the function, not its module
    assert "attention" in dir(nbhelpers) and "widgets" in dir(nbhelpers)
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        _ = nbhelpers.no_such_name


def test_the_package_offers_every_explorer_and_every_figure_its_layer_exports():
    """nbhelpers' lazy exports (its _MODULES table) and each layer's own __all__ name the
    same explorers; every name the package offers for figures is one the figures export."""
    import nbhelpers
    import nbhelpers.figures
    import nbhelpers.widgets

    assert sorted(nbhelpers._MODULES["widgets"]) == sorted(nbhelpers.widgets.__all__)
    assert set(nbhelpers._MODULES["figures"]) <= set(nbhelpers.figures.__all__)


def test_no_two_modules_import_each_other_even_inside_a_function():
    """A cycle broken by an import inside a function still ties two modules together."""
    files = {name: path for name, path in modules() if path.name != "__init__.py"}
    graph = {name: {t for t in imported(name, path) if t in files and t != name}
             for name, path in files.items()}  # fmt: skip
    done, path = set(), []

    def visit(name):
        if name in path:
            raise AssertionError(f"import cycle: {' -> '.join([*path[path.index(name) :], name])}")
        if name in done:
            return
        path.append(name)
        for target in sorted(graph[name]):
            visit(target)
        path.pop()
        done.add(name)

    for name in sorted(graph):
        visit(name)
