"""Measured coverage across processes (tests/conftest.py): with ``TORCH_FOO_CALL_COUNTS_DIR`` set,
a process that imported torch_foo writes, at exit, how often each manifest kernel was called
through its generated wrapper (``torch_foo._C._call_counts()``) to ``<dir>/<pid>.json``."""

import atexit
import json
import os

ENV = "TORCH_FOO_CALL_COUNTS_DIR"


def _dump(directory):
    from torch_foo import _C

    counts = _C._call_counts()
    if counts and os.path.isdir(directory):  # the pytest process removes it once it has summed
        with open(os.path.join(directory, f"{os.getpid()}.json"), "w") as f:
            json.dump(dict(counts), f)


def install():
    directory = os.environ.get(ENV)
    if directory and os.path.isdir(directory):
        atexit.register(_dump, directory)
