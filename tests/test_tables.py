"""The course's printed tables: columns line up in any language."""

from nbhelpers import table
from nbhelpers.support.tables import width


def test_columns_line_up_by_display_width_with_numbers_on_the_right():
    text = table([["犬", "0.500", 3], ["河岸", "12.25", 1024]], ["token", "p", "n"])
    lines = text.splitlines()
    assert lines == [
        "token      p     n",
        "犬     0.500     3",
        "河岸   12.25  1024",
    ]
    # a wide character takes two columns: every line has the same display width
    assert {width(line) for line in lines} == {width(lines[0])}


def test_rows_may_be_any_iterable_and_the_header_is_optional():
    text = table(zip(["a", "b"], [1, 22], strict=True))
    assert text.splitlines() == ["a   1", "b  22"]
