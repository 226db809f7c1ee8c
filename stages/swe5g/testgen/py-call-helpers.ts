/**
 * The Python helpers every generated Strategy A test module carries (py-direct-call.ts): the
 * package roots on `sys.path`, building the inputs from a spec (`_f2p_build`), an instance made
 * without `__init__` (`_f2p_instance`), running the call (a coroutine to completion, a generator
 * drained) and the crash rule (`_f2p_crash`). `__DEPTH__` (parents from the test file to the
 * repository root) and `__ROOTS__` (a JSON list of root folders) are filled in by the emitter.
 */
export const PY_CALL_HELPERS = `import asyncio
import importlib
import inspect
import pathlib
import sys
import traceback
from unittest import mock

_REPO = pathlib.Path(__file__).resolve().parents[__DEPTH__]
for _root in reversed(__ROOTS__):
    _path = str((_REPO / _root).resolve())
    if _path not in sys.path:
        sys.path.insert(0, _path)


class _F2PDict(dict):
    """A dict without the keys the fix guards (reading one raises KeyError); any other key reads
    as a stand-in (MagicMock)."""

    def __init__(self, absent=()):
        super().__init__()
        self._f2p_absent = set(absent)

    def __missing__(self, key):
        if key in self._f2p_absent:
            raise KeyError(key)
        value = self[key] = mock.MagicMock(name=str(key))
        return value

    def get(self, key, default=None):
        if key in self or key not in self._f2p_absent:
            return self[key]
        return default


def _f2p_instance(cls):
    """An instance of cls made without __init__: unset attributes read as MagicMocks, except
    the ones listed in _f2p_absent and dunder names."""

    def __getattr__(self, name):
        if name.startswith("__") or name == "_f2p_absent" or name in self.__dict__.get("_f2p_absent", ()):
            raise AttributeError(name)
        value = mock.MagicMock(name=name)
        object.__setattr__(self, name, value)
        return value

    try:
        sub = type(cls.__name__, (cls,), {"__getattr__": __getattr__, "__module__": cls.__module__})
        sub.__abstractmethods__ = frozenset()
    except TypeError:
        sub = cls
    try:
        obj = object.__new__(sub)
    except TypeError:
        obj = sub.__new__(sub)
    try:
        object.__setattr__(obj, "_f2p_absent", set())
    except (AttributeError, TypeError):
        pass
    return obj


def _f2p_build(spec, target=None):
    """The value a spec describes: None, [], {}, a stand-in object with attributes set (or
    missing), a dict with keys set (or missing)."""
    kind = spec["t"]
    if kind == "none":
        return None
    if kind == "list":
        return []
    if kind == "empty_dict":
        return {}
    if kind == "dict":
        value = _F2PDict(spec["absent"])
        for key, sub in spec["keys"].items():
            value[key] = _f2p_build(sub)
        return value
    value = mock.MagicMock() if target is None else target
    for name, sub in spec["attrs"].items():
        setattr(value, name, _f2p_build(sub))
    for name in spec["absent"]:
        if isinstance(value, mock.Mock):
            delattr(value, name)
        else:
            value._f2p_absent.add(name)
    return value


def _f2p_crash(exc, expect):
    """Whether exc is the crash the fix prevents (see the generator: per input form), or a
    NameError (UnboundLocalError): code that cannot run whatever the input."""
    if isinstance(exc, NameError):
        return True
    text = str(exc)
    if expect["none"] and isinstance(exc, (AttributeError, TypeError)) and "NoneType" in text:
        return True
    if isinstance(exc, KeyError) and exc.args and (expect["any_key"] or exc.args[0] in expect["keys"]):
        return True
    if expect["index"] and isinstance(exc, IndexError):
        return True
    if isinstance(exc, AttributeError):
        name = getattr(exc, "name", None)
        return any(a == name or a == text or ("'%s'" % a) in text for a in expect["attrs"])
    return False


def _f2p_where(exc):
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "unknown"
    last = frames[-1]
    return "%s (%s:%d)" % (last.name, pathlib.Path(last.filename).name, last.lineno)


def _f2p_check(call, function, inputs, expect):
    """Runs call (a coroutine to completion, a generator drained); fails on the crash only."""
    try:
        result = call()
        if inspect.iscoroutine(result):
            asyncio.run(result)
        elif inspect.isgenerator(result):
            for _ in zip(range(10000), result):
                pass
    except Exception as exc:  # noqa: BLE001 - which exceptions count is _f2p_crash's rule
        if _f2p_crash(exc, expect):
            raise AssertionError(
                "%s crashed on %s: %s: %s at %s" % (function, inputs, type(exc).__name__, exc, _f2p_where(exc))
            ) from None
        print("%s raised %s (%s) on %s: not the crash the fix prevents" % (function, type(exc).__name__, exc, inputs))
`;
