"""The main job (``embdebias run``): its steps over the debiasing methods, its state and resume,
its output plan and safety, and its options.

:func:`run_pipeline` (``run.py``) runs it; :class:`RunOptions` (``options.py``) describes
every option once; ``state.py`` keeps ``run_state.json`` and commits the outputs;
``outputs.py`` plans and checks them before any work.
"""

from .options import RunOptions, evaluate_kwargs
from .outputs import MARKER, PARTIAL, REPORT_FILES, STATE, check_out_dir, is_run_directory, planned_outputs
from .run import input_identity, run_pipeline

__all__ = ["run_pipeline", "RunOptions", "evaluate_kwargs", "planned_outputs", "check_out_dir", "is_run_directory",
           "input_identity", "MARKER", "PARTIAL", "STATE", "REPORT_FILES"]
