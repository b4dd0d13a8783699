"""Trusted harness that calls a library function on recorded arguments.

Never imported by arcmemo: :mod:`arcmemo.library.calls` reads it as text and appends it
to a module of library functions, followed by a call of :func:`_arcmemo_load_codec`, so
that the function is found by its name in the module's globals. Each call decodes its
arguments (objects are rebuilt from the module's classes), calls the function and returns
the call's encoded outcome as canonical JSON text (what it returned, or an effect when it
changed its arguments); an exception is returned as its type's name, so that two
functions can be compared call by call whatever they do.
"""

import types as _arcmemo_types

_arcmemo_codec = _arcmemo_types.ModuleType("arcmemo_values")


def _arcmemo_load_codec(source):
    exec(source, _arcmemo_codec.__dict__)


def _arcmemo_call(name, args, kwargs):
    function = globals()[name]
    namespace = globals()
    arguments = _arcmemo_codec.decode(args, namespace)
    keywords = {key: _arcmemo_codec.decode(item, namespace) for key, item in kwargs.items()}
    before = _arcmemo_codec.encode(list(arguments))
    try:
        value = function(*arguments, **keywords)
    except Exception as error:
        return {"raised": type(error).__name__}
    try:
        result = _arcmemo_codec.outcome(before, list(arguments), value)
    except _arcmemo_codec.Unrecordable as error:
        return {"unrecordable": str(error)}
    return {"result": _arcmemo_codec.canonical(result)}
