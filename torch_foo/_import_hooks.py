"""Run a function right after a module is first imported, without importing it ourselves.

torch_foo plugs into torch.compile's Dynamo and Inductor (``_compile.py``), but importing those
takes about as long as importing torch itself, and every ``import torch`` imports torch_foo
(autoload). So the registrations wait for the program's own first import of those modules.
"""

import sys
import warnings
from importlib.abc import MetaPathFinder

_pending = {}  # module name -> callbacks to run once it has been executed


def after_import(name, callback):
    """Call ``callback(module)`` once module ``name`` is imported (now, if it already is)."""
    if name in sys.modules:
        _run(name, [callback], sys.modules[name])
        return
    _pending.setdefault(name, []).append(callback)
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


def _run(name, callbacks, module):
    for callback in callbacks:
        try:
            callback(module)
        except Exception as e:  # an integration failing must not break the user's import
            warnings.warn(f"torch_foo: setting up {name} failed: {e!r}", stacklevel=3)


class _Finder(MetaPathFinder):
    """Finds a watched module with the other finders, then runs its callbacks after it executes."""

    def find_spec(self, name, path, target=None):
        if name not in _pending:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec  # nothing to wrap; the module imports as usual, without the callbacks
        execute = loader.exec_module
        callbacks = _pending.pop(name)

        def exec_then_call_back(module):
            execute(module)
            _run(name, callbacks, module)

        # Loaders of source files are per module, so patching this instance touches nothing else.
        loader.exec_module = exec_then_call_back
        return spec
