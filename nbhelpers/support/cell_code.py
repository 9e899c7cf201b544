"""What a notebook cell runs: its code without comments and docstrings. The Japanese edition
translates those, so this is what must be the same in both editions (scripts/translations.py)
and what names a cell when a rerun must find its earlier explorer (widgets/base.py)."""

from __future__ import annotations

import ast


def runnable_code(source: str) -> str | None:
    """The code of a cell without its comments and docstrings, as an AST dump (None if it
    does not parse). IPython's %magic and !shell lines are left out."""
    lines = ["" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            body[0] = ast.Expr(ast.Constant(""))  # a docstring, whatever its language
    return ast.dump(tree)  # comments are not in the tree
