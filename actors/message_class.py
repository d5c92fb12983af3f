"""``@message``: the frozen, slotted value classes of ``messages/``, cheap to define.

The same guarantees as ``@dataclass(frozen=True, slots=True)`` — typed fields
(mypy reads ``dataclass_transform``), ``__slots__``, immutability
(``FrozenInstanceError``), field-wise ``==`` and ``hash`` (identity with
``eq=False``), a ``Name(field=value, ...)`` repr, ``__match_args__``, base
classes' fields first — for a fraction of the cost at import: the dataclass
decorator compiles six methods per class from source and then builds the
class a second time for its slots, ~0.28 ms a class, and the bridge has ~90
messages to define before it can answer ``initialize`` (docs/performance.md,
"Start-up"). Here each class is built once, with its slots; ``__init__`` is
the only method made per class, and its code is compiled once per field
layout (many messages share one); the other methods are shared functions that
read the class's field names.

``__init__`` stores each field through its slot's descriptor (what a frozen
dataclass does through ``object.__setattr__``), so making a message costs no
more than before.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from dataclasses import MISSING, Field, FrozenInstanceError, field
from types import CodeType, FunctionType
from typing import Any, TypeVar, cast, dataclass_transform, overload

T = TypeVar("T", bound=type)

FIELDS = "__message_fields__"  # every field's name, base classes' first: the order of __init__'s parameters
DEFAULTS = "__message_defaults__"  # name → default value, or the Field naming its default_factory
VALUES = "__message_values__"  # the fields' values, for == and hash: an attrgetter (one value for one field)

REQUIRED, DEFAULT, FACTORY = 0, 1, 2  # how __init__ gets a field's value
_init_templates: dict[tuple[bool, ...], CodeType] = {}


def _init_code(names: tuple[str, ...], kinds: tuple[int, ...]) -> CodeType:
    """``__init__``'s code: ``_set{i}(self, field_i)`` for each field, the per-class parts (slot
    setters, factories) being globals and the defaults the function's.

    Compiled once per shape (how many fields, which have a factory) with placeholder names,
    then given the class's parameter names: a code object's locals are addressed by index.
    """
    shape = tuple(kind == FACTORY for kind in kinds)
    template = _init_templates.get(shape)
    if template is None:
        params = [f"_{index}" for index in range(len(shape))]
        lines = [f"def __init__({', '.join(['self', *params])}):"]
        for index, (param, factory) in enumerate(zip(params, shape, strict=True)):
            value = f"_factory{index}() if {param} is _MISSING else {param}" if factory else param
            lines.append(f"    _set{index}(self, {value})")
        lines.append("    pass")
        namespace: dict[str, Any] = {}
        exec(compile("\n".join(lines), "<message __init__>", "exec"), namespace)
        template = _init_templates[shape] = namespace["__init__"].__code__
    return template.replace(co_varnames=("self", *names))


def _make_init(cls: type, names: tuple[str, ...], defaults: dict[str, Any]) -> FunctionType:
    kinds = tuple(REQUIRED if name not in defaults else FACTORY if isinstance(defaults[name], Field) else DEFAULT
                  for name in names)
    scope: dict[str, Any] = {"_MISSING": MISSING}
    for index, name in enumerate(names):
        scope[f"_set{index}"] = getattr(cls, name).__set__  # the slot's descriptor (inherited ones too)
        if kinds[index] == FACTORY:
            scope[f"_factory{index}"] = defaults[name].default_factory
    trailing = tuple(MISSING if kind == FACTORY else defaults[name]
                     for name, kind in zip(names, kinds, strict=True) if kind != REQUIRED)
    init = FunctionType(_init_code(names, kinds), scope, "__init__", trailing or None)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _no_values(instance: Any) -> tuple[()]:
    return ()


def _values(instance: Any) -> tuple[Any, ...]:
    return tuple([getattr(instance, name) for name in getattr(instance, FIELDS)])


def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in getattr(self, FIELDS))
    return f"{type(self).__qualname__}({shown})"


def _eq(self: Any, other: Any) -> Any:  # a bool, or NotImplemented for another class
    if other.__class__ is not self.__class__:
        return NotImplemented
    values = getattr(self, VALUES)
    return values(self) == values(other)


def _hash(self: Any) -> int:
    return hash(getattr(self, VALUES)(self))


def _setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _reduce(self: Any) -> tuple[type, tuple[Any, ...]]:
    """copy and pickle remake a message through ``__init__`` (the frozen ``__setattr__`` refuses them)."""
    return type(self), _values(self)


def _check_field(cls: type, name: str, spec: Field[Any]) -> None:
    """Only ``default`` and ``default_factory``: mypy would honour the other options, ``__init__`` would not."""
    if not (spec.init and spec.repr and spec.compare and spec.hash is None and spec.kw_only is MISSING
            and not spec.metadata):
        raise TypeError(f"{cls.__name__}.{name}: a message field takes only default or default_factory")


def _build(cls: type, eq: bool) -> type:
    names = list(getattr(cls, FIELDS, ()))  # a message base class's fields come first
    defaults: dict[str, Any] = dict(getattr(cls, DEFAULTS, {}))
    body = dict(cls.__dict__)
    own = []
    for name, annotation in body.get("__annotations__", {}).items():
        if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
            continue
        if name not in names:
            names.append(name)
            own.append(name)
        if name in body:
            value = body.pop(name)  # a default: __init__'s, not a class attribute (a slot takes the name)
            if isinstance(value, Field):
                _check_field(cls, name, value)
                if value.default_factory is MISSING:
                    value = value.default
            if value is not MISSING and not isinstance(value, Field) and type(value).__hash__ is None:
                # As dataclasses refuse it: one list or dict would be shared by every message.
                raise TypeError(f"{cls.__name__}.{name}: a mutable default ({type(value).__name__});"
                                " use field(default_factory=...)")
            if value is not MISSING:
                defaults[name] = value
    after_a_default = False
    for name in names:
        if name in defaults:
            after_a_default = True
        elif after_a_default:
            raise TypeError(f"{cls.__name__}: the field {name!r} without a default follows one with a default")
    body.pop("__dict__", None)
    body.pop("__weakref__", None)
    body.update({"__slots__": tuple(own), "__qualname__": cls.__qualname__, FIELDS: tuple(names),
                 DEFAULTS: defaults, "__match_args__": tuple(names),
                 VALUES: attrgetter(*names) if names else staticmethod(_no_values)})
    shared: dict[str, Callable[..., Any]] = {"__repr__": _repr, "__setattr__": _setattr, "__delattr__": _delattr,
                                             "__reduce__": _reduce}
    if eq:
        shared.update({"__eq__": _eq, "__hash__": _hash})
    for method, function in shared.items():
        body.setdefault(method, function)
    built = type(cls)(cls.__name__, cls.__bases__, body)
    built.__init__ = _make_init(built, tuple(names), defaults)  # type: ignore[misc]
    return built


@overload
def message(cls: T, /) -> T: ...


@overload
def message(*, eq: bool = True) -> Callable[[T], T]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
def message(cls: T | None = None, /, *, eq: bool = True) -> T | Callable[[T], T]:
    """Make ``cls`` a frozen, slotted message class; ``eq=False``: equal only to itself."""
    if cls is None:
        return lambda undecorated: cast(T, _build(undecorated, eq))
    return cast(T, _build(cls, eq))
