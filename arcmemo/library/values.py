"""Python values as JSON, for recorded calls (:class:`arcmemo.memory.schema.RecordedCall`).

The same code runs on both sides: arcmemo imports it, and the tracing and test harnesses
exec its text inside the sandbox (so this module imports nothing of arcmemo, and numpy
only when a value needs it). JSON values stand for themselves where that is unambiguous:

* ``None``, booleans, ints, finite floats, strings, lists of values and dicts with string
  keys (other than the tag key) are JSON as they are;
* everything else is a tagged object ``{"__t": TAG, ...}``: ``tuple``, ``set``,
  ``frozenset`` (items sorted by their JSON text, so equal sets encode equally), ``dict``
  (non-string keys or a key named ``__t``: a list of pairs), ``float`` (nan, inf, -inf),
  ``ndarray`` (dtype, shape and nested data: grids are arrays), ``np`` (a numpy scalar with
  its dtype), ``object`` (a dataclass or a plain object: its class name and its
  ``__dict__``; decoded only where a class of that name is in the namespace given to
  :func:`decode`), ``effect`` (a call's result when the call changed its arguments: what
  it returned and every positional argument after the call).

What cannot be recorded (:class:`Unrecordable`): functions, lambdas, generators, modules,
classes, files, objects without ``__dict__`` (slots), numpy arrays of objects, values
nested more than :data:`MAX_DEPTH` deep, and values over :data:`MAX_ITEMS` items. A call
with such an argument or result is not recorded. An object is encoded, but rebuilt only
where its class is a global of the module that decodes it: objects of classes defined
inside a function (BARC's ``RotationalSymmetry``) make their calls fail to re-run, so the
functions taking them are not kept.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

TAG = "__t"
MAX_DEPTH = 12
MAX_ITEMS = 20_000


class Unrecordable(ValueError):
    """A value that has no JSON encoding here (the message says which and why)."""


def _numpy() -> Any:
    import numpy

    return numpy


def encode(value: Any, namespace_budget: list[int] | None = None, depth: int = 0) -> Any:
    """``value`` as a JSON value (see the module docstring); raises :class:`Unrecordable`."""
    budget = namespace_budget if namespace_budget is not None else [MAX_ITEMS]
    if depth > MAX_DEPTH:
        raise Unrecordable(f"nested more than {MAX_DEPTH} levels deep")
    budget[0] -= 1
    if budget[0] < 0:
        raise Unrecordable(f"more than {MAX_ITEMS} items")
    if value is None or isinstance(value, (bool, str)):
        return value
    if type(value) is int:
        return value
    if type(value) is float:
        if math.isfinite(value):
            return value
        return {TAG: "float", "value": repr(value)}
    if type(value) is list:
        return [encode(item, budget, depth + 1) for item in value]
    if type(value) is tuple:
        return {TAG: "tuple", "items": [encode(item, budget, depth + 1) for item in value]}
    if type(value) in (set, frozenset):
        items = [encode(item, budget, depth + 1) for item in value]
        items.sort(key=lambda item: json.dumps(item, sort_keys=True))
        return {TAG: type(value).__name__, "items": items}
    if type(value) is dict:
        if all(type(key) is str for key in value) and TAG not in value:
            return {key: encode(item, budget, depth + 1) for key, item in value.items()}
        pairs = [
            [encode(key, budget, depth + 1), encode(item, budget, depth + 1)]
            for key, item in value.items()
        ]
        return {TAG: "dict", "items": pairs}
    module = type(value).__module__
    if module == "numpy":
        np = _numpy()
        if isinstance(value, np.ndarray):
            if value.dtype.kind not in "biuf":
                raise Unrecordable(f"a numpy array of dtype {value.dtype}")
            budget[0] -= value.size
            if budget[0] < 0:
                raise Unrecordable(f"more than {MAX_ITEMS} items")
            data = value.tolist()
            if value.dtype.kind == "f" and not bool(np.isfinite(value).all()):
                data = encode(data, [MAX_ITEMS], 0)
            return {
                TAG: "ndarray",
                "dtype": str(value.dtype),
                "shape": list(value.shape),
                "data": data,
            }
        if isinstance(value, np.generic) and value.dtype.kind in "biuf":
            return {TAG: "np", "dtype": str(value.dtype), "value": encode(value.item())}
        raise Unrecordable(f"a numpy value of type {type(value).__name__}")
    if isinstance(value, type) or callable(value) or not hasattr(value, "__dict__"):
        raise Unrecordable(f"a value of type {type(value).__name__}")
    if dataclasses.is_dataclass(value):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    else:
        fields = dict(vars(value))
    if not all(type(key) is str for key in fields):
        raise Unrecordable(f"a {type(value).__name__} with non-string attribute names")
    encoded = {key: encode(item, budget, depth + 1) for key, item in fields.items()}
    return {TAG: "object", "class": type(value).__name__, "fields": encoded}


def decode(data: Any, namespace: dict[str, Any] | None = None) -> Any:
    """The Python value :func:`encode` made ``data`` from. Objects are rebuilt from the
    class of their name in ``namespace`` (without calling ``__init__``); raises
    :class:`Unrecordable` when it is not there."""
    if isinstance(data, list):
        return [decode(item, namespace) for item in data]
    if not isinstance(data, dict):
        return data
    tag = data.get(TAG)
    if tag is None:
        return {key: decode(item, namespace) for key, item in data.items()}
    if tag == "tuple":
        return tuple(decode(item, namespace) for item in data["items"])
    if tag == "set":
        return {decode(item, namespace) for item in data["items"]}
    if tag == "frozenset":
        return frozenset(decode(item, namespace) for item in data["items"])
    if tag == "dict":
        return {decode(key, namespace): decode(item, namespace) for key, item in data["items"]}
    if tag == "float":
        return float(data["value"])
    if tag == "ndarray":
        np = _numpy()
        array = np.array(decode(data["data"], namespace), dtype=data["dtype"])
        return array.reshape(data["shape"])
    if tag == "np":
        return _numpy().dtype(data["dtype"]).type(data["value"])
    if tag == "object":
        cls = (namespace or {}).get(data["class"])
        if not isinstance(cls, type):
            raise Unrecordable(f"no class {data['class']} to rebuild an object of")
        instance: Any = object.__new__(cls)
        for key, item in data["fields"].items():
            object.__setattr__(instance, key, decode(item, namespace))
        return instance
    if tag == "effect":
        return {
            "returned": decode(data["returned"], namespace),
            "args": [decode(item, namespace) for item in data["args"]],
        }
    raise Unrecordable(f"unknown tag {tag!r}")


def outcome(args_before: Any, args_after: list[Any], returned: Any) -> Any:
    """The encoded result of a call: what it returned, or an ``effect`` when the call
    changed an argument (``args_before`` and the arguments' encodings before the call)."""
    encoded_returned = encode(returned)
    after = [encode(arg) for arg in args_after]
    if after == args_before:
        return encoded_returned
    return {TAG: "effect", "returned": encoded_returned, "args": after}


def returned(result: Any) -> Any:
    """The returned value's encoding within a recorded result (an ``effect`` or not)."""
    if isinstance(result, dict) and result.get(TAG) == "effect":
        return result["returned"]
    return result


def classes_in(data: Any) -> set[str]:
    """Names of the classes of the objects an encoded value holds (to rebuild them, a
    module must define those classes)."""
    found: set[str] = set()
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            if item.get(TAG) == "object":
                found.add(str(item["class"]))
            stack.extend(item.values())
    return found


def canonical(data: Any) -> str:
    """One text per encoded value (keys sorted), for comparing and hashing."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"))
