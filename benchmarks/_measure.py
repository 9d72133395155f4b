"""Peak memory of the current process, for the benchmarks' fresh subprocesses."""

from __future__ import annotations

import resource
import threading
import time


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


def _status_kb(*fields: str) -> dict:
    out = dict.fromkeys(fields, 0)
    with open("/proc/self/status") as fh:
        for line in fh:
            key = line.split(":", 1)[0]
            if key in out:
                out[key] = int(line.split()[1])
    return out


class PeakSampler:
    """Peak anonymous and file-backed resident memory while a block runs (Linux).

    ``VmHWM`` counts the pages of memory-mapped files too, which the kernel can drop
    at will; sampling ``RssAnon`` and ``RssFile`` every few milliseconds tells the
    memory a process really holds from the mapped pages it merely touched.
    """

    def __init__(self, interval: float = 0.005):
        self.interval = interval
        self.peak = {"RssAnon": 0, "RssFile": 0}
        self._stop = threading.Event()

    def _sample(self) -> None:
        while not self._stop.is_set():
            for k, v in _status_kb(*self.peak).items():
                self.peak[k] = max(self.peak[k], v)
            time.sleep(self.interval)

    def __enter__(self) -> "PeakSampler":
        self.base = _status_kb(*self.peak)
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def write_page(path, text: str) -> None:
    """Write a results page atomically (a reader never sees half of it)."""
    from pathlib import Path

    from embdebias._atomic import atomic_file

    with atomic_file(Path(path)) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")


def command_line(script: str, argv=None) -> str:
    """The command that ran ``benchmarks/SCRIPT`` with ``argv`` (default: this process's), for a page."""
    import sys

    given = sys.argv[1:] if argv is None else list(argv)
    return " ".join([f"python benchmarks/{script}", *given])


def publish(text: str, out=None) -> None:
    """Print a results page, and write it atomically to ``out`` when given."""
    print(text)
    if out:
        write_page(out, text)
