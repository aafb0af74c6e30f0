"""The registry of scorers, metrics and reducers, and the Inspect-style decorators.

Built-ins register the same way plugins do: through the entry-point groups `evtui.scorers`,
`evtui.metrics`, `evtui.reducers` (see pyproject.toml). Decorating a factory also registers
it, so a `--plugin FILE` only has to be executed.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Literal

Kind = Literal["scorer", "metric", "reducer"]
KINDS: tuple[Kind, ...] = ("scorer", "metric", "reducer")
ENTRY_POINT_GROUPS: dict[Kind, str] = {
    "scorer": "evtui.scorers",
    "metric": "evtui.metrics",
    "reducer": "evtui.reducers",
}
INFO_ATTR = "__evtui_info__"


@dataclass
class RegistryEntry:
    """A registered factory: calling it with the spec's arguments gives the scorer/metric/reducer."""

    kind: Kind
    name: str
    factory: Callable[..., Any]
    origin: str = "builtin"  # builtin | entry point name | file path

    @property
    def description(self) -> str:
        doc = inspect.getdoc(self.factory) or ""
        return doc.strip().splitlines()[0] if doc.strip() else ""

    @property
    def signature(self) -> inspect.Signature:
        return inspect.signature(self.factory)


@dataclass
class Info:
    """What a made scorer/metric/reducer remembers about how it was made."""

    kind: Kind
    name: str
    params: dict[str, Any] = field(default_factory=dict)
    metrics: Any = None  # scorers: their default metrics (list or dict), as given to @scorer
    options: dict[str, Any] = field(default_factory=dict)  # e.g. metric scores="unreduced"


class UnknownNameError(LookupError):
    """A spec named something that is not registered; the message lists close names."""

    def __init__(self, kind: Kind, name: str, known: list[str]) -> None:
        self.kind, self.name, self.known = kind, name, known
        close = difflib.get_close_matches(name, known, n=5, cutoff=0.5)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        super().__init__(f"unknown {kind} {name!r}.{hint} Known {kind}s: {', '.join(sorted(known))}")


_registry: dict[Kind, dict[str, RegistryEntry]] = {kind: {} for kind in KINDS}
_entry_points_loaded: set[Kind] = set()


def register(kind: Kind, name: str, factory: Callable[..., Any], *, origin: str = "builtin") -> None:
    """Add (or replace) a factory under `name`."""
    _registry[kind][name] = RegistryEntry(kind, name, factory, origin)


def _load_entry_points(kind: Kind) -> None:
    if kind in _entry_points_loaded:
        return
    _entry_points_loaded.add(kind)
    for ep in entry_points(group=ENTRY_POINT_GROUPS[kind]):
        factory = ep.load()
        origin = "builtin" if ep.value.startswith("evtui.") else f"entry point {ep.value}"
        if ep.name not in _registry[kind] or _registry[kind][ep.name].factory is not factory:
            register(kind, ep.name, factory, origin=origin)


def entries(kind: Kind) -> list[RegistryEntry]:
    """Every registered factory of `kind`, built-ins and plugins, sorted by name."""
    _load_entry_points(kind)
    return sorted(_registry[kind].values(), key=lambda entry: entry.name)


def lookup(kind: Kind, name: str) -> RegistryEntry:
    """The entry registered as `name`; UnknownNameError (with suggestions) if there is none."""
    _load_entry_points(kind)
    try:
        return _registry[kind][name]
    except KeyError:
        raise UnknownNameError(kind, name, list(_registry[kind])) from None


def info(obj: Any) -> Info | None:
    """The Info attached to a made scorer/metric/reducer, if it was made by a decorated factory."""
    return getattr(obj, INFO_ATTR, None)


def _bound_params(factory: Callable[..., Any], args: tuple, kwargs: dict) -> dict[str, Any]:
    try:
        bound = inspect.signature(factory).bind(*args, **kwargs)
    except TypeError:
        return dict(kwargs)
    bound.apply_defaults()
    return {k: v for k, v in bound.arguments.items() if k not in ("args", "kwargs")}


def _decorate(kind: Kind, factory: Callable[..., Any], name: str | None, **extra: Any) -> Callable[..., Any]:
    registered_name = name or factory.__name__

    @functools.wraps(factory)
    def make(*args: Any, **kwargs: Any) -> Any:
        made = factory(*args, **kwargs)
        made_info = Info(kind, registered_name, _bound_params(factory, args, kwargs), **extra)
        try:
            setattr(made, INFO_ATTR, made_info)
        except AttributeError:  # e.g. a bound method; wrap so the info can travel
            inner = made

            @functools.wraps(inner)
            async def made(*a: Any, **k: Any) -> Any:  # type: ignore[no-redef]
                return await inner(*a, **k)

            setattr(made, INFO_ATTR, made_info)
        return made

    setattr(make, "__evtui_factory__", (kind, registered_name))
    register(kind, registered_name, make, origin=getattr(factory, "__module__", "builtin"))
    return make


def scorer(metrics: Any = None, name: str | None = None, **metadata: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Inspect-style: `@scorer(metrics=[accuracy(), stderr()])` on a factory returning `async def score(state, target)`."""

    def wrap(factory: Callable[..., Any]) -> Callable[..., Any]:
        return _decorate("scorer", factory, name, metrics=metrics, options=metadata)

    return wrap


def metric(fn: Callable[..., Any] | None = None, *, name: str | None = None, scores: str = "auto") -> Any:
    """Inspect-style: `@metric` or `@metric(scores="unreduced")` on a factory returning `metric(scores) -> value`."""

    def wrap(factory: Callable[..., Any]) -> Callable[..., Any]:
        return _decorate("metric", factory, name, options={"scores": scores})

    return wrap(fn) if fn is not None else wrap


def score_reducer(fn: Callable[..., Any] | None = None, *, name: str | None = None) -> Any:
    """Inspect-style: `@score_reducer(name="mean")` on a factory returning `reduce(scores) -> Score`."""

    def wrap(factory: Callable[..., Any]) -> Callable[..., Any]:
        return _decorate("reducer", factory, name)

    return wrap(fn) if fn is not None else wrap
