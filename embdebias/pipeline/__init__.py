"""The main job (``embdebias run``): its steps over the debiasing methods, its state and resume,
its output plan and safety, and its options.

:func:`run_pipeline` (``run.py``) runs it; :class:`RunOptions` (``options.py``) describes
every option once; ``state.py`` keeps ``run_state.json`` and commits the outputs;
``outputs.py`` plans and checks them before any work. The names below are imported when
first used, so that the command line's parser (which reads ``options.py``) starts fast.
"""

from __future__ import annotations

import importlib

_EXPORTS = {"run_pipeline": ".run", "input_identity": ".run", "RunOptions": ".options",
            "evaluate_kwargs": ".options", "planned_outputs": ".outputs", "check_out_dir": ".outputs",
            "is_run_directory": ".outputs", "MARKER": ".outputs", "PARTIAL": ".outputs", "STATE": ".outputs",
            "REPORT_FILES": ".outputs"}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    raise AttributeError(f"module 'embdebias.pipeline' has no attribute {name!r}")
