"""The ``slow`` marker of the suite, the check that the fast loop stays fast, and the warnings check.

``python -m pytest -q`` (the README's test command, and the last step of CI) runs every test;
``python -m pytest -q -m "not slow"`` is the fast loop, under a minute. A test is slow when it
takes more than about a second on two cores: a real run, a subprocess, a signal, a lock race,
the full GloVe (and, for the minute to hold 1,600 tests, most tests over a quarter of a second
of CPU: docs/contributing.md says how it was measured). They are named here, by module or by test, so that the marker needs no edit
of the test files; a name that no longer matches a collected test is an error (when a
whole module is collected), so the list cannot silently rot.

Every test not marked slow is timed (setup, call and teardown: a module fixture counts for the
first test that asks for it). Its CPU time is what is checked, not its wall time, because
the CPU time of a test hardly moves with the load of a shared machine: the process's own
and that of the subprocesses it waited for (:func:`os.times`). A fast-tier test over
:data:`REPORT_CPU_SECONDS` is listed at the end of the run; one over :data:`FAIL_CPU_SECONDS`
fails the run (exit status 1), which a test meant to take under a second reaches only when it
was never marked. The bound is generous on purpose: the check must never fail by chance.
"""

from __future__ import annotations

import os
import sys
import time

import pytest

pytest_plugins = ["pytester"]  # test_fast_tier_check runs this file's checks on toy tests

# Every test of these modules: full runs, subprocesses, signals and lock races (the fast loop,
# -m "not slow", does not import them: see pytest_ignore_collect).
SLOW_MODULES = {
    "test_run.py", "test_run_locks.py", "test_outputs_safety.py", "test_locks.py", "test_fuzz.py",
    "test_benchmarks_smoke.py", "test_golden.py",
    "test_sweep_dask.py",  # dask clusters of worker processes
    "test_benchmark_dask.py",  # the erasure benchmark on a dask cluster of worker processes
    # a run and a sweep of the same methods (the smallest check: about 40 s on a shared machine)
    "test_sweep_agrees_with_run.py",
    "test_benchmarks_smoke.py", "test_golden.py", "test_report_share.py",
    "test_benchmarks_smoke.py", "test_golden.py", "test_clean_exit.py",
}

# Single tests (a parametrized test by its name: every parameter; with its id in brackets: that one).
SLOW_TESTS = {
    "test_report_certificate.py::test_a_run_reports_the_certificates_in_report_md_json_and_card",
    "test_report_certificate.py::test_every_linear_method_is_certified_on_the_same_labelled_words",
    "test_cli_debias_erasure.py::test_gender_plus_another_attribute_is_one_certified_map",
    "test_cli_debias_erasure.py::test_normalize_is_the_users_choice_for_the_methods_that_offer_it",
    # the erasure benchmark's runs (fits and probes over seeds: 3 to 5 s of CPU each)
    "test_benchmark.py::test_linear_leakage_falls_to_chance_and_nonlinear_remains",
    "test_benchmark.py::test_the_summary_is_the_mean_and_t_interval_of_the_seeds",
    "test_benchmark.py::test_the_same_seeds_give_the_same_table",
    "test_benchmark.py::test_markdown_names_the_published_figures_and_their_data",
    "test_benchmark.py::test_command_writes_the_table_parquet_figure_at_once",
    "test_benchmark.py::test_quality_tests_unscored_on_a_foreign_vocabulary_are_nan_with_the_reason",
    # imports gensim (about 3 s) to reach fastText's option check
    "test_warnings_point_at_user.py::test_a_large_fasttext_bucket_is_warned_at_the_users_train_embedding_call",
    "test_trust.py::test_cli_reliability_and_bad_input",
    "test_evaluate_reuse.py::test_the_first_column_is_scored_again_when_its_inputs_change",
    "test_sweep_reuse.py::test_a_serial_sweep_scores_its_baseline_once_with_the_same_rows",
    "test_trust.py::test_train_seeds_on_a_corpus_gensim_ships",
    "test_trust.py::test_cli_score_with_a_lexicon_and_bad_lexicon",
    "test_trust.py::test_evaluate_trust_section_and_json_round_trip",
    "test_trust.py::test_trust_off_leaves_no_section",
    "test_progress.py::test_evaluate_shows_a_bar_over_the_columns_metrics",
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
    # Measured in the fast tier on 2026-11-27 (issue 30): over about a second each.
    # Whole runs, sweeps and evaluations of the full suite (the module fixture of the first
    # test counts for the tests that share it, so they are named together).
    "test_run_save.py::test_only_the_saved_methods_vectors_are_written",
    "test_run_save.py::test_a_method_evaluated_row_by_row_scores_as_its_written_vectors",
    "test_run_save.py::test_the_parameters_make_the_vectors_later",
    "test_run_save.py::test_a_rerun_evaluates_an_unsaved_method_from_its_parameters",
    "test_run_save.py::test_vectors_no_longer_saved_leave_the_directory",
    "test_run_save.py::test_debias_params_applies_every_methods_file",
    "test_run_attributes.py::test_one_attribute_and_several_do_not_share_a_directory",
    "test_run_attributes.py::test_a_run_of_several_attributes_keeps_its_input",
    "test_run_attributes.py::test_run_pipeline_takes_attribute_in_python",
    "test_run_attributes.py::test_a_run_of_several_attributes_has_a_section_and_verdict_lines_for_each",
    "test_run_attributes.py::test_debias_inlp_and_rlace_take_an_attribute",
    "test_run_attributes.py::test_evaluate_and_run_a_three_group_attribute",
    "test_run_attributes.py::test_run_of_another_attribute_names_it_everywhere",
    "test_run_attributes.py::test_an_attribute_without_weat_tests_scores_no_weat",
    "test_run_attributes.py::test_debias_plot_and_score_take_the_attribute",
    "test_cli_traps.py::test_run_into_another_inputs_results_needs_force",
    "test_cli_traps.py::test_ctrl_c_during_run_says_how_to_resume",
    "test_cli_traps.py::test_debias_and_train_check_the_name_too",
    "test_run_methods.py::test_max_missing_reaches_every_method_that_takes_it",
    "test_run_methods.py::test_run_tests_file_scores_the_users_tests_and_reruns_when_it_changes",
    "test_run_methods.py::test_a_users_list_shortfall_is_warned_and_stated_once_in_the_report",
    "test_sweep.py::test_serial_sweep_table_summary_error_row_and_resume",
    "test_sweep.py::test_command",
    "test_evaluate.py::test_report_table_shape_and_values",
    "test_evaluate.py::test_markdown",
    "test_evaluate.py::test_value_raises_key_error_and_report_explains_itself",
    "test_evaluate.py::test_to_frame_long_format_or_clear_error",
    "test_evaluate.py::test_names_are_case_insensitive_and_quality_needs_no_definitional_pairs",
    "test_uncertainty.py::test_score_and_run_give_a_column_the_same_numbers",
    "test_uncertainty.py::test_a_column_keeps_its_numbers_whatever_its_name_and_company",
    "test_uncertainty.py::test_every_bias_number_gets_an_interval_and_a_paired_comparison",
    "test_report_summary.py::test_the_run_figures_are_drawn_with_captions_tied_to_the_tables",
    "test_report_methods.py::test_a_metric_warning_of_every_column_is_said_once_with_its_count",
    "test_extrinsic.py::test_report_has_the_extrinsic_section_and_agreement",
    "test_cli.py::test_score_is_tolerant_unless_strict_and_keeps_warning_filters",
    # Fits of the iterative debiasers, solver comparisons, long reads.
    "test_debias_multiclass.py::test_inlp_and_rlace_remove_three_groups",
    "test_debiasers_rlace.py::test_seeded_and_deterministic",
    "test_debiasers_rlace.py::test_solvers_agree_on_a_fit",
    "test_evaluate_fast_paths.py::test_analogy_answers_match_the_float64_argmax",
    "test_io_errors.py::test_text_error_line_found_in_a_late_block",
    "test_metric_gipe.py::test_equals_the_word_by_word_transcription",
    "test_train.py::test_training_finds_the_planted_topics",
    # Under a second, but over a quarter of a second of CPU each: the fast loop's minute
    # holds about 1,700 tests at 35 ms on average.
    "test_debiasers_rlace.py::test_result_is_a_rank_k_orthogonal_projection",
    "test_debiasers_rlace.py::test_gender_is_no_longer_linearly_decodable",
    "test_debiasers_rlace.py::test_default_fit_eigendecomposes_d_by_d_only_at_the_start",
    "test_debiasers_rlace.py::test_factored_solver_follows_the_dense_one",
    "test_debiasers_rlace.py::test_rank_two_and_bad_rank",
    "test_soft.py::test_moments_precision_on_many_rows",
    "test_soft.py::test_fast_solver_matches_cvxpy",
    "test_run_attributes.py::test_another_attribute_chooses_its_metrics_tests_and_subspace",
    "test_extrinsic.py::test_score_tests_extrinsic_cli",
    "test_extrinsic.py::test_fair_embedding_scores_zero_and_biased_one_does_not",
    "test_extrinsic.py::test_probe_scores_through_the_fairness_command_give_the_same_numbers",
    "test_extrinsic.py::test_threshold_median_and_numeric",
    "test_extrinsic.py::test_extrinsic_is_seeded",
    "test_extrinsic.py::test_missing_terms_are_listed_or_raise",
    "test_cli.py::test_plot_with_empty_word_list_exits_2",
    "test_cli.py::test_score_json_and_markdown",
    "test_cli.py::test_expand_threshold_options",
    "test_debiasers_double_hard.py::test_glove_search_and_outputs_are_those_before_the_stacked_search",
    "test_debiasers_double_hard.py::test_search_equals_the_transcribed_notebook",
    "test_io.py::test_binary_reader_across_many_small_windows",
    "test_io.py::test_gensim_sample_fasttext_bin",
    "test_io.py::test_one_extension_table_for_api_run_and_cli",
    "test_io_w2vbin.py::test_records_straddling_every_window_boundary",
    "test_io_w2vbin.py::test_word_hashes_are_a_function_of_the_bytes",
    "test_io_w2vbin.py::test_hostile_headers_fail_cleanly_under_a_memory_cap",
    "test_io_w2vbin.py::test_vectors_made_of_spaces",
    "test_io_w2vbin.py::test_follow_matches_a_plain_walk",
    "test_io_properties.py::test_plain_words_and_finite_values_round_trip_exactly",
    "test_estimators.py::test_hard_debias_properties",
    "test_estimators.py::test_soft_debias_properties",
    "test_plot.py::test_plot_writes_file",
    "test_plot.py::test_figure_has_one_panel_per_embedding",
    "test_layers.py::test_lint_imports_contracts_are_kept",
    "test_layers.py::test_embedding_save_works_without_importing_io_first",
    "test_report_summary.py::test_residual_tests_score_when_their_neutral_list_is_short",
    "test_report_summary.py::test_score_takes_a_users_weat_file_and_names_a_bad_key",
    "test_report_summary.py::test_debiased_columns_say_what_changed_beyond_the_noise_and_at_what_cost",
    "test_train.py::test_a_truncated_gzip_corpus",
    "test_train.py::test_transform_may_add_lines",
    "test_train.py::test_workers_1_is_bit_for_bit_reproducible_and_the_seed_matters",
    "test_train.py::test_cli_trains_what_the_api_trains_and_leaves_the_input_alone",
    "test_train.py::test_train_model_returns_the_gensim_model_with_the_defaults",
    "test_two_means.py::test_labels_are_sklearns",
    "test_io_misreads.py::test_npz_companion_larger_than_the_words_need_is_refused_before_inflating",
    "test_cda.py::test_augment_streams_lazily",
    "test_cda.py::test_a_line_longer_than_a_block",
    "test_debias_multiclass.py::test_equals_wefes_algorithm_on_glove_subset",
    "test_metrics_quality.py::test_word_similarity_matches_gensim",
    "test_io_input.py::test_every_reading_command_passes_unicode_errors_on[score]",
    "test_evaluate.py::test_missing_words_are_loud",
    "test_io_native_validation.py::test_fasttext_word_that_lost_its_nul_is_refused",
    "test_expand.py::test_chosen_threshold_reaches_the_target_on_held_out_words",
    "test_metrics_weat.py::test_same_seed_same_numbers_and_block_size_does_not_matter",
    "test_residual.py::test_shuffled_rows_and_native_files_give_identical_results",
    "test_query_metrics.py::test_evaluate_gives_the_query_metrics_intervals_and_paired_comparisons",
    "test_io_input.py::test_every_reading_command_passes_unicode_errors_on[plot]",
    "test_cli_fairness.py::test_options_reach_the_metric",
    "test_output_paths.py::test_a_sweep_with_failed_points_exits_1_and_says_why",
    "test_user_files.py::test_a_large_list_named_by_an_attribute_file_is_read_in_bounded_memory",
    "test_fairness_many_groups.py::test_a_hundred_thousand_groups_in_bounded_memory",
    "test_fairness_many_groups.py::test_the_cli_on_a_hundred_thousand_groups",
    "test_io_long_words.py::test_a_file_embdebias_wrote_with_lines_past_the_sniffed_bytes_is_detected",
    "test_io_long_words.py::test_a_ten_megabyte_glove_word_is_refused_in_bounded_memory",
    "test_io_long_words.py::test_a_binary_file_with_long_records_stays_binary",
    # Issue 30, after the merges of this stop: fast-tier tests over 0.3 s (pytest --durations, 2 cores shared).
    "test_attribute_object.py::test_no_module_but_the_resolver_branches_on_gender",
    "test_cli_startup.py::test_parser_version_and_every_help_import_nothing_heavy",
    "test_report_summary.py::test_the_share_removed_and_its_interval_come_from_the_same_resamples",
    "test_params_format.py::test_a_deflated_bomb_is_never_inflated_past_its_declared_size",
    "test_report_methods.py::test_mean_abs_weat_d_is_the_mean_of_the_tests_and_keeps_no_company",
    "test_soft.py::test_naive_dense_formulation_agrees",
    "test_output_paths.py::test_a_hostile_attribute_name_is_refused_before_anything_is_written",
    "test_run_save.py::test_debias_params_refuses_what_does_not_apply",
    "test_train.py::test_bench_train_smoke",
    "test_io_input.py::test_unknown_builtin_name_lists_the_builtin_names",
    "test_report_summary.py::test_is_it_biased_counts_every_family_with_a_test",
    "test_report_methods.py::test_the_aggregates_survive_json",
    "test_fast_tier_check.py::test_a_fast_tier_test_over_the_bound_fails_the_run_and_the_listed_ones_are_named",
    "test_debiasers_ran.py::test_one_word_alone_equals_the_batch",
    "test_cli.py::test_debias_replaces_only_with_force_and_says_when_it_creates_a_directory",
    "test_fast_tier_check.py::test_a_slow_test_is_not_timed",
    "test_run_save.py::test_debias_never_writes_over_its_parameter_files",
    "test_run_attributes.py::test_gender_is_the_default_and_unchanged",
    "test_train.py::test_every_output_format_round_trips",
    "test_run_save.py::test_debias_save_params_round_trip",
    "test_residual.py::test_word_sets_follow_the_protocol",
    "test_debiasers_params.py::test_round_trip_gives_the_same_vectors",
    "test_evaluate.py::test_suite_selection_names_and_errors",
    "test_wordlists.py::test_lowercase_lists_are_in_glove_6b",
    "test_io_input.py::test_unicode_errors_on_the_command_line",
    "test_debias_multiclass.py::test_gender_as_an_attribute_is_todays_hard_debias",
    "test_io.py::test_gensim_sample_vec_and_bin_agree",
    "test_train.py::test_gzip_corpus_trains_the_same_vectors",
    "test_debias_multiclass.py::test_race_and_religion_attributes_debias_their_neutral_words",
    "test_residual.py::test_missing_words_are_left_out_and_counted",
    "test_evaluate_fast_paths.py::test_native_lookups_binary_search_many_words_without_decoding",
}


_SKIPPED_SLOW_MODULES: set[str] = set()


def _fast_tier(config) -> bool:
    """The run is the fast loop: ``-m "not slow"`` and nothing else."""
    return " ".join((config.option.markexpr or "").split()) == "not slow"


def pytest_ignore_collect(collection_path, config):
    # The fast loop does not even import the slow modules (their imports -- dask, the
    # benchmarks -- cost it seconds of collection); they count as seen for the stale check.
    if _fast_tier(config) and collection_path.name in SLOW_MODULES:
        _SKIPPED_SLOW_MODULES.add(collection_path.name)
        return True
    return None


def _key(item) -> tuple[str, str, str]:
    """``(module file name, module::test name without parameters, module::test[parameters])`` of a
    collected test (the last two are the same for a test without parameters)."""
    module = item.path.name
    return module, f"{module}::{getattr(item, 'originalname', item.name)}", f"{module}::{item.name}"


@pytest.hookimpl(tryfirst=True)  # before -m / -k deselect anything
def pytest_collection_modifyitems(config, items):
    seen_modules, seen_tests = set(_SKIPPED_SLOW_MODULES), set()
    for item in items:
        module, test, instance = _key(item)
        seen_modules.add(module)
        seen_tests.update((test, instance))
        if module in SLOW_MODULES or test in SLOW_TESTS or instance in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
    if any("::" in arg for arg in config.args):
        return  # single tests were asked for: their modules are not whole
    stale = sorted(t for t in SLOW_TESTS if t.split("::")[0] in seen_modules and t not in seen_tests)
    stale += sorted(m for m in SLOW_MODULES if m not in seen_modules and _whole_suite(config))
    if stale:
        raise pytest.UsageError(f"tests/conftest.py names tests that do not exist: {', '.join(stale)}")


def _whole_suite(config) -> bool:
    return not config.args or all(arg.rstrip("/").endswith("tests") for arg in config.args)


# -- the fast tier stays fast ---------------------------------------------------------------
#: CPU seconds over which a test not marked slow is listed at the end of the run.
REPORT_CPU_SECONDS = 1.0
#: CPU seconds over which a test not marked slow fails the run.
FAIL_CPU_SECONDS = 5.0
_FAST_BUT_SLOW: list[tuple[float, float, str, list[str]]] = []  # (CPU s, wall s, test id, packages it imported)


def _cpu_seconds() -> float:
    """CPU time of this process and of the subprocesses it has waited for."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if item.get_closest_marker("slow") is not None:
        yield
        return
    modules, cpu, wall = len(sys.modules), _cpu_seconds(), time.perf_counter()
    yield
    cpu, wall = _cpu_seconds() - cpu, time.perf_counter() - wall
    if cpu > REPORT_CPU_SECONDS:
        # The first test to import a library pays for it: say so (sys.modules keeps import order).
        imported = [name for name in list(sys.modules)[modules:] if "." not in name and not name.startswith("_")]
        _FAST_BUT_SLOW.append((cpu, wall, item.nodeid, imported))


# -- every warning asserted or filtered ---------------------------------------------------
# pytest.warns and the filterwarnings of pyproject.toml take the expected ones; any warning
# that still reaches pytest's record fails the run (exit status 1), after its summary.
_UNEXPECTED_WARNINGS: list[str] = []


def pytest_warning_recorded(warning_message, when, nodeid, location):
    _UNEXPECTED_WARNINGS.append(f"{nodeid or location}: {warning_message.category.__name__}: "
                                f"{str(warning_message.message)[:200]}")


def pytest_sessionfinish(session, exitstatus):
    too_slow = any(cpu > FAIL_CPU_SECONDS for cpu, *_ in _FAST_BUT_SLOW)
    if (_UNEXPECTED_WARNINGS or too_slow) and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _FAST_BUT_SLOW:
        terminalreporter.section(f"tests not marked slow over {REPORT_CPU_SECONDS:g} s of CPU (over "
                                 f"{FAIL_CPU_SECONDS:g} s fails the run: name them in tests/conftest.py)")
        for cpu, wall, nodeid, imported in sorted(_FAST_BUT_SLOW, reverse=True):
            verdict = "  FAILS" if cpu > FAIL_CPU_SECONDS else ""
            first = f" (imported {', '.join(imported)})" if imported else ""
            terminalreporter.write_line(f"{cpu:6.2f} s CPU {wall:6.2f} s wall  {nodeid}{verdict}{first}")
    if _UNEXPECTED_WARNINGS:
        terminalreporter.section("warnings neither asserted nor filtered (they fail the run)")
        for line in _UNEXPECTED_WARNINGS:
            terminalreporter.write_line(line)
