"""tests/conftest.py's check of the fast tier: a test not marked slow that takes too much CPU is
listed, and over the failing bound it fails the run (run here with the bounds scaled down)."""

from pathlib import Path

CONFTEST = Path(__file__).with_name("conftest.py")

BURNING = """
import time


def burn(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_quick():
    pass


def test_listed():
    burn(0.05)


def test_importing():
    import fresh_module_of_the_check  # noqa: F401 (a module no test imported before)

    burn(0.05)


def test_over_the_bound():
    burn(0.15)


def test_marked_slow():
    burn(0.15)
"""


def _run(pytester, monkeypatch, *args):
    # Without the installed plugins (hypothesis): each in-process run would import them again,
    # 2 s of CPU when bytecode is not cached; the check needs none of them.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    text = CONFTEST.read_text(encoding="utf-8")
    text = text.replace("REPORT_CPU_SECONDS = 1.0", "REPORT_CPU_SECONDS = 0.03")
    text = text.replace("FAIL_CPU_SECONDS = 5.0", "FAIL_CPU_SECONDS = 0.1")
    assert "REPORT_CPU_SECONDS = 0.03" in text and "FAIL_CPU_SECONDS = 0.1" in text  # the names still exist
    text = text.replace("SLOW_MODULES = {", 'SLOW_MODULES = {"test_nothing_else.py", ', 1)
    text = text.replace("SLOW_TESTS = {", 'SLOW_TESTS = {"test_burning.py::test_marked_slow", ', 1)
    pytester.makeconftest(text)
    pytester.makeini("[pytest]\nmarkers =\n    slow: slow\n")
    pytester.makefile(".py", test_burning=BURNING, test_nothing_else="def test_x():\n    pass\n",
                      fresh_module_of_the_check="")
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)


def test_a_fast_tier_test_over_the_bound_fails_the_run_and_the_listed_ones_are_named(pytester, monkeypatch):
    result = _run(pytester, monkeypatch, "-m", "not slow")
    # test_marked_slow is deselected; the slow module's test_x is not even collected
    result.assert_outcomes(passed=4, deselected=1)
    assert result.ret == 1
    out = result.stdout.str()
    assert "test_burning.py::test_over_the_bound  FAILS" in out
    listed = sorted(line.split("wall  ")[1] for line in out.splitlines() if " s CPU " in line)
    assert listed == ["test_burning.py::test_importing (imported fresh_module_of_the_check)", "test_burning.py::test_listed",
                      "test_burning.py::test_over_the_bound  FAILS"]


def test_a_slow_test_is_not_timed(pytester, monkeypatch):
    result = _run(pytester, monkeypatch, "test_burning.py::test_marked_slow", "test_burning.py::test_quick")
    result.assert_outcomes(passed=2)
    assert result.ret == 0 and " s CPU " not in result.stdout.str()
