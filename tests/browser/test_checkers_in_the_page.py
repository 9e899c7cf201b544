"""What the learner reads in the page, for every checker and every readout: in JupyterLab
in Chromium, read from the rendered page's visible text, not from the stored JSON.

One notebook per language, generated here, holds three cells per exercise (the table in
tests/answers/): the unchanged skeleton, the first usual mistake, the worked solution. After
Run All, each cell's output area must show the kernel's whole report as text (a front end
shows only a bundle's richest type, so a report beside a picture must still be read): "not
attempted" for the skeleton, the hint's words (and the largest error, and for a matrix the
picture under the report) for the mistake, "passed" for the solution. One case also runs in
Notebook 7. A third notebook shows each explorer whose readout names tokens, with tokens
that look like tags (<SOS>, <EOS>, <PAD>): the page must show them as text.
"""

from __future__ import annotations

import re

import nbformat
import pytest

from answers import Says, all_exercises
from browser.lab import ALL_EXECUTED, CLOSE_NOTEBOOK, KERNEL_READY, open_and_run_all
from explorer_checks import OUR_MARKUP, TAG_EXPLORERS, TAGS

pytestmark = pytest.mark.slow
EXERCISES = all_exercises()
# the kernel imports tests/answers through the PYTHONPATH it inherits (conftest.py)
SETUP = """from answers import all_exercises, skeleton, solved
EX = {e.name: e for e in all_exercises()}"""
KINDS = {
    "skeleton": "EX[{name!r}].checker(skeleton(EX[{name!r}]))",
    "mistake": "EX[{name!r}].checker(EX[{name!r}].mistakes[0][0])",
    "solution": "EX[{name!r}].checker(solved()[EX[{name!r}].solution])",
}
# What each kind of report must say, in each language.
SAYS = {
    "en": {"skeleton": "not attempted", "mistake": "✗", "solution": "passed", "hint": "hint:"},
    "ja": {"skeleton": "未着手", "mistake": "✗", "solution": "合格", "hint": "ヒント："},
}
# Per output area: the kernel's report (text/plain), the HTML it sent, and what the page
# shows (its visible text, and whether each image decoded).
READ_OUTPUTS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  return panel.content.widgets.filter((c) => c.model.type === 'code').slice(1).map((cell) => {
    const output = cell.model.outputs.toJSON().find((o) => o.data) || {data: {}};
    const area = cell.node.querySelector('.jp-OutputArea');
    return {
      source: cell.model.sharedModel.getSource(),
      report: String(output.data['text/plain'] || ''),
      sentPicture: String(output.data['text/html'] || '').includes('<img'),
      shown: area ? area.innerText : '',
      images: area
        ? [...area.querySelectorAll('img')].map((i) => i.complete && i.naturalWidth > 0) : [],
      pictureUnderText: area ? (() => {
        const pre = area.querySelector('pre'), img = area.querySelector('img');
        return !img || !!(pre && (pre.compareDocumentPosition(img) & 4));  // img follows pre
      })() : false,
    };
  });
}"""


def checker_notebook(language: str) -> nbformat.NotebookNode:
    setup = ("%env NBHELPERS_LANG=ja\n" if language == "ja" else "") + SETUP
    cells = [nbformat.v4.new_code_cell(setup)]
    for exercise in EXERCISES:
        for template in KINDS.values():
            cells.append(nbformat.v4.new_code_cell(template.format(name=exercise.name)))
    return new_notebook(cells)


def new_notebook(cells) -> nbformat.NotebookNode:
    """A notebook the front end opens in the course's kernel without asking which."""
    kernel = {"name": "python3", "display_name": "Python 3 (course)", "language": "python"}
    return nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": kernel})


def words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.parametrize("language", ["en", "ja"])
def test_every_checker_report_is_read_on_the_page(language, page, lab):
    relative = f"checks-{language}.ipynb"
    nbformat.write(checker_notebook(language), lab.root / relative)
    try:
        open_and_run_all(page, relative)
        outputs = page.evaluate(READ_OUTPUTS)
    finally:
        page.evaluate(CLOSE_NOTEBOOK)
    says = SAYS[language]
    problems, hinted, pictures = [], 0, 0
    assert len(outputs) == 3 * len(EXERCISES)
    for index, output in enumerate(outputs):
        exercise, kind = EXERCISES[index // 3], list(KINDS)[index % 3]
        where = f"{exercise.name}, {kind}"
        shown, report = words(output["shown"]), words(output["report"])
        if not report or report not in shown:
            problems.append(f"{where}: the page shows {shown!r}, the report is {report!r}")
            continue
        if says[kind] not in shown:
            problems.append(f"{where}: {says[kind]!r} is not on the page: {shown!r}")
        if kind == "mistake":
            expected = exercise.mistakes[0][1]
            if not isinstance(expected, Says):
                if says["hint"] not in shown or (language == "en" and expected not in shown):
                    problems.append(f"{where}: no hint ({expected!r}) on the page: {shown!r}")
                else:
                    hinted += 1
            if output["sentPicture"]:
                pictures += 1
                if output["images"] != [True] or not output["pictureUnderText"]:
                    problems.append(f"{where}: the picture is not shown under the report")
    mistakes = sum(not isinstance(e.mistakes[0][1], Says) for e in EXERCISES)
    print(
        f"\n{language}: {len(EXERCISES)} exercises read on the page: skeleton, mistake and "
        f"solution each; {hinted} of {mistakes} mistakes show their hint's words, "
        f"{pictures} with the picture under the report"
    )
    assert not problems, "\n".join(problems)
    assert pictures > 0, "no mistake in the table draws a matrix: the picture goes unchecked"


def test_a_checker_report_is_read_in_notebook_7(browser, notebook7):
    """The same in Notebook 7: a wrong matrix's report and its picture, both shown."""
    relative = "check-notebook7.ipynb"
    exercise = next(e for e in EXERCISES if e.name == "check_similarity_scores")
    notebook = new_notebook(
        [
            nbformat.v4.new_code_cell(SETUP),
            nbformat.v4.new_code_cell(KINDS["mistake"].format(name=exercise.name)),
        ]
    )
    nbformat.write(notebook, notebook7.root / relative)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{notebook7.base}/notebooks/{relative}?token={notebook7.token}")
        page.wait_for_function("() => !!window.jupyterapp", timeout=90_000)
        page.evaluate("async () => { await window.jupyterapp.restored; }")
        page.wait_for_function(KERNEL_READY, arg=relative, timeout=90_000)
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        page.wait_for_function(ALL_EXECUTED, timeout=120_000, polling=200)
        (output,) = page.evaluate(READ_OUTPUTS)
    finally:
        page.evaluate(
            "async () => { await window.jupyterapp.shell.currentWidget"
            "?.sessionContext.shutdown(); }"
        )
        page.close()
    shown = words(output["shown"])
    assert words(output["report"]) in shown and exercise.mistakes[0][1] in shown, shown
    assert output["images"] == [True] and output["pictureUnderText"]


def test_tokens_that_look_like_tags_are_read_in_each_explorer(page, lab):
    """Each explorer of explorer_checks.TAG_EXPLORERS, in the page: its readout shows a token
    such as <SOS> as text, and holds no element the course's templates never write."""
    setup = "from explorer_checks import TAG_EXPLORERS"
    cells = [nbformat.v4.new_code_cell(setup)] + [
        nbformat.v4.new_code_cell(f"TAG_EXPLORERS[{name!r}]()") for name in TAG_EXPLORERS
    ]
    relative = "tag-tokens.ipynb"
    nbformat.write(new_notebook(cells), lab.root / relative)
    try:
        open_and_run_all(page, relative)
        count = len(TAG_EXPLORERS)
        page.wait_for_function(
            f"() => document.querySelectorAll('.widget-html-content').length >= {count}",
            timeout=30_000,
        )
        readouts = page.evaluate(READ_READOUTS)
    finally:
        page.evaluate(CLOSE_NOTEBOOK)
    problems, good = [], 0
    for name, readout in zip(TAG_EXPLORERS, readouts, strict=True):
        shown = [token for token in TAGS if token in readout["text"]]
        if not shown:
            problems.append(f"{name}: no token on the page: {readout['text']!r}")
        if set(readout["tags"]) - OUR_MARKUP:
            problems.append(f"{name}: tokens became elements {readout['tags']}")
        good += bool(shown) and not set(readout["tags"]) - OUR_MARKUP
    print(f"\n{good} of {len(TAG_EXPLORERS)} explorers show <SOS>-like tokens as text in the "
          "page")  # fmt: skip
    assert not problems, "\n".join(problems)


# Per code cell after the first: its readout's visible text and the elements inside it.
READ_READOUTS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  return panel.content.widgets.filter((c) => c.model.type === 'code').slice(1).map((cell) => {
    const readout = cell.node.querySelector('.widget-html-content');
    return readout ? {
      text: readout.innerText,
      tags: [...new Set([...readout.querySelectorAll('*')].map((e) => e.tagName.toLowerCase()))],
    } : {text: '', tags: []};
  });
}"""
