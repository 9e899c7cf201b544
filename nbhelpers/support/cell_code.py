"""What a notebook cell runs, whatever the language of its words.

The Japanese edition of a notebook is the English program with its own literals, comments
and docstrings, so what must be the same in both editions (scripts/translations.py), and what
names a cell when a rerun must find its earlier explorer (widgets/base.py), is the code with
those masked: every string literal, the literal parts of f-strings, docstrings and comments.
The expressions inside an f-string are code and are compared; since a translation may put
them in another order ("{a} of {b}" against 「{b} の {a}」), as a multiset.
"""

from __future__ import annotations

import ast


def _unmagic(source: str) -> str:
    # IPython's %magic and !shell lines are not Python
    lines = ["" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()]
    return "\n".join(lines)


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(_unmagic(source))
    except SyntaxError:
        return None


class _Mask(ast.NodeTransformer):
    def visit_Constant(self, node):
        return ast.Constant("") if isinstance(node.value, str) else node

    def visit_JoinedStr(self, node):
        # the literal parts go, the formatted values stay, in a fixed order
        values = [self.visit(v) for v in node.values if isinstance(v, ast.FormattedValue)]
        values.sort(key=ast.dump)
        return ast.JoinedStr(values=values)


def _masked(node: ast.AST) -> str:
    return ast.dump(_Mask().visit(node))


def runnable_code(source: str) -> str | None:
    """The code of a cell with its comments, docstrings and string literals masked, as an AST
    dump (None if it does not parse)."""
    tree = _parse(source)
    return None if tree is None else _masked(tree)


def first_difference(english: str, japanese: str) -> tuple[str, str] | None:
    """The innermost statement where two cells' code differs once masked, as the pair of its
    sources on one line each (English, Japanese); None when they do not differ (or do not
    parse)."""
    trees = _parse(english), _parse(japanese)
    if None in trees:
        return None
    statements = [[n for n in ast.walk(t) if isinstance(n, ast.stmt)] for t in trees]
    found = None
    # breadth first: a differing statement's parent differs too, so the last one found is
    # the innermost
    for a, b in zip(*statements, strict=False):
        if _masked(a) != _masked(b):
            found = a, b
    if found is None:
        if len(statements[0]) == len(statements[1]):
            return None
        extra = max(statements, key=len)[min(map(len, statements))]
        shown = ast.unparse(extra)
        return (shown, "(nothing)") if extra in statements[0] else ("(nothing)", shown)
    # the whole statement on one line: a multi-line call or import shows what differs
    segments = [
        " ".join((ast.get_source_segment(_unmagic(source), node) or "").split())
        for source, node in zip((english, japanese), found, strict=True)
    ]
    return segments[0], segments[1]
