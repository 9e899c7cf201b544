"""pytest set-up shared by the unit tests and nbval."""


def pytest_collectstart(collector):
    # nbval: warnings on stderr (a deprecation in a dependency, say) are not part of what a
    # notebook teaches, so they are not compared. Errors still fail the cell.
    if collector.fspath and collector.fspath.ext == ".ipynb":
        collector.skip_compare += ("stderr",)
