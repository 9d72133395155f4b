"""The ``slow`` marker of the suite.

``python -m pytest -q`` (the README's test command, and the last step of CI) runs every test;
``python -m pytest -q -m "not slow"`` is the fast loop, under a minute. A test is slow when it
takes more than about a second on two cores: a real run, a subprocess, a signal, a lock race,
the full GloVe. They are named here, by module or by test, so that the marker needs no edit
of the test files; a name that no longer matches a collected test is an error (when a
whole module is collected), so the list cannot silently rot.
"""

from __future__ import annotations

import pytest

# Every test of these modules: full runs, subprocesses, signals and lock races.
SLOW_MODULES = {
    "test_run.py", "test_run_locks.py", "test_outputs_safety.py", "test_locks.py", "test_fuzz.py",
    "test_benchmarks_smoke.py", "test_golden.py",
}

# Single tests (a parametrized test by its name: every parameter).
SLOW_TESTS = {
    "test_trust.py::test_cli_reliability_and_bad_input",
    "test_trust.py::test_train_seeds_on_a_corpus_gensim_ships",
    "test_trust.py::test_cli_score_with_a_lexicon_and_bad_lexicon",
    "test_trust.py::test_evaluate_trust_section_and_json_round_trip",
    "test_trust.py::test_trust_off_leaves_no_section",
    "test_trust.py::test_run_with_lexicons_reports_validity_per_method",
    "test_readme.py::test_python_snippet_runs",
    "test_readme.py::test_extrinsic_snippet_of_the_docs_runs",
    "test_debiaser_table.py::test_soft_takes_its_moments_from_hards_pass",
    "test_debiaser_table.py::test_a_toy_debiaser_beside_the_others_and_in_the_api",
    "test_debiaser_table.py::test_a_toy_debiaser_runs_through_the_pipeline",
    "test_residual.py::test_bench_residual_smoke",
    "test_hard.py::test_default_equals_bolukbasi_on_glove_6b_50d",
    "test_io_misreads.py::test_cda_memory_stays_bounded_on_one_long_line",
    "test_io_misreads.py::test_cda_long_line_in_parts_gives_what_the_whole_line_gives",
    "test_train.py::test_reproducible_whatever_the_hash_seed",
    "test_train.py::test_the_fast_path_gives_exactly_the_regex_tokens",
    "test_cli.py::test_closed_pipe_is_not_an_error",
    "test_cli.py::test_malformed_input_no_traceback_in_subprocess",
    "test_cli_fairness.py::test_no_traceback_in_a_subprocess",
    "test_evaluate.py::test_same_seed_same_report_and_json_round_trip",
    "test_evaluate_fast_paths.py::test_evaluate_never_passes_over_a_memory_mapped_embedding",
    "test_io.py::test_real_default_embedding",
    "test_io_native_validation.py::test_word_order_check_agrees_with_python",
    "test_io_properties.py::test_any_words_round_trip_exactly_or_are_refused",
    "test_io_text_strict.py::test_text_writers_round_trip_exactly_or_refuse",
    "test_io_w2vbin.py::test_write_then_read_gives_the_same_words_and_vectors",
    "test_layers.py::test_no_import_cycle_among_modules_or_top_level_units",
    "test_layers.py::test_no_module_imports_a_private_module_of_another_package",
    "test_metrics_quality.py::test_analogy_matches_gensim",
    "test_cda.py::test_naive_mode_matches_a_word_by_word_reference",
    "test_cda.py::test_benchmark_runs_small",
    "test_cli.py::test_plot_one_panel_per_input",
    "test_run_methods.py::test_the_default_run_compares_its_methods_and_states_its_expected_shortfalls_once",
    "test_io_pickle.py::test_mutated_pickles_and_companions_give_clean_errors",
}


def _key(item) -> tuple[str, str]:
    """``(module file name, module::test name without parameters)`` of a collected test."""
    module = item.path.name
    return module, f"{module}::{item.originalname if hasattr(item, 'originalname') else item.name}"


@pytest.hookimpl(tryfirst=True)  # before -m / -k deselect anything
def pytest_collection_modifyitems(config, items):
    seen_modules, seen_tests = set(), set()
    for item in items:
        module, test = _key(item)
        seen_modules.add(module)
        seen_tests.add(test)
        if module in SLOW_MODULES or test in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
    if any("::" in arg for arg in config.args):
        return  # single tests were asked for: their modules are not whole
    stale = sorted(t for t in SLOW_TESTS if t.split("::")[0] in seen_modules and t not in seen_tests)
    stale += sorted(m for m in SLOW_MODULES if m not in seen_modules and _whole_suite(config))
    if stale:
        raise pytest.UsageError(f"tests/conftest.py names tests that do not exist: {', '.join(stale)}")


def _whole_suite(config) -> bool:
    return not config.args or all(arg.rstrip("/").endswith("tests") for arg in config.args)


# -- every warning asserted or filtered ---------------------------------------------------
# pytest.warns and the filterwarnings of pyproject.toml take the expected ones; any warning
# that still reaches pytest's record fails the run (exit status 1), after its summary.
_UNEXPECTED_WARNINGS: list[str] = []


def pytest_warning_recorded(warning_message, when, nodeid, location):
    _UNEXPECTED_WARNINGS.append(f"{nodeid or location}: {warning_message.category.__name__}: "
                                f"{str(warning_message.message)[:200]}")


def pytest_sessionfinish(session, exitstatus):
    if _UNEXPECTED_WARNINGS and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _UNEXPECTED_WARNINGS:
        terminalreporter.section("warnings neither asserted nor filtered (they fail the run)")
        for line in _UNEXPECTED_WARNINGS:
            terminalreporter.write_line(line)
