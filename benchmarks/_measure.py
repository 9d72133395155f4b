"""Peak memory of the current process, for the benchmarks' fresh subprocesses."""

from __future__ import annotations

import resource


def peak_kb() -> int:
    """Peak resident set size of this process in KiB.

    Reads ``VmHWM`` from ``/proc/self/status``: on Linux ``ru_maxrss`` of a child
    started by fork/exec carries the parent's peak over, so it overstates a small
    child's peak. Falls back to ``ru_maxrss`` where /proc is not there.
    """
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
