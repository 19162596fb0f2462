"""PoCL's CPU workers pinned one per core in the caller's process, as the
clscale tool does (docs/DEVICES.md): unpinned, a busy process's PoCL
threads migrate between cores and a call took 10-40% longer on a 2-core VM.
The C library leaves the environment alone; the Python package, a program's
front door like the tool, sets POCL_AFFINITY=1 at import unless the caller
set POCL_AFFINITY (any value: POCL_AFFINITY=0 keeps PoCL unpinned) or the
process may not run on every online core (a taskset, a batch system's
share). PoCL reads it once, when the first OpenCL call loads it: importing
clscale first is what makes it count."""
import os


def pin_pocl():
    if "POCL_AFFINITY" in os.environ:
        return
    try:
        if len(os.sched_getaffinity(0)) != os.cpu_count():
            return
    except (AttributeError, OSError):
        return
    os.environ["POCL_AFFINITY"] = "1"
