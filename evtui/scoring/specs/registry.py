"""The registry of scorers, metrics and reducers, and the Inspect-style decorators.

Decorating a factory registers it, so built-ins register simply by being imported: the first
lookup imports every module listed by `builtin_modules()` (so a new built-in module needs no
reinstall; the few that load the grading client only when the name is not found elsewhere), then
the entry-point groups `evtui.scorers`, `evtui.metrics`, `evtui.reducers`
(third-party plugins; pyproject.toml may list built-ins there too). A `--plugin FILE` only has
to be executed (see plugins.py).
"""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
import pkgutil
import warnings
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
_builtins_loaded = False
# The packages of evtui.scoring whose modules define built-ins (the three systems evtui follows).
BUILTIN_PACKAGES = ("evtui.scoring.inspect", "evtui.scoring.evsys", "evtui.scoring.ag2")
load_errors: dict[str, str] = {}  # built-in module -> why it failed to import


def builtin_modules() -> list[str]:
    """Every module of the BUILTIN_PACKAGES (scorers, metrics and reducers register on import)."""
    names = []
    for package_name in BUILTIN_PACKAGES:
        package = importlib.import_module(package_name)
        names += [info.name for info in pkgutil.walk_packages(package.__path__, f"{package_name}.") if not info.ispkg]
    return sorted(names)


# Built-in modules that import the grading client (httpx and the rest: 0.25 s): a lookup imports
# them only when the other built-ins and the plugins do not have the name, so `match` loads no
# grading code. Listing every entry imports them too.
DEFERRED_BUILTINS = (
    "evtui.scoring.ag2.agent_judge", "evtui.scoring.ag2.failure_attribution", "evtui.scoring.inspect.scorers.model_graded",
)  # fmt: skip
_deferred_loaded = False
_deferred_entry_points: list[tuple[Kind, Any]] = []


def load_builtins(*, deferred: bool = True) -> None:
    """Import the built-in modules once (`deferred=False`: all but DEFERRED_BUILTINS); a module
    that fails is reported, the others still load."""
    global _builtins_loaded
    if not _builtins_loaded:
        _builtins_loaded = True
        for module in builtin_modules():
            if module not in DEFERRED_BUILTINS:
                _import_builtin(module)
    if deferred:
        _load_deferred_builtins()


def _load_deferred_builtins() -> None:
    global _deferred_loaded
    if _deferred_loaded:
        return
    _deferred_loaded = True
    # Plugins (entry points, files) outrank built-ins: a late built-in must not replace one.
    plugins = {kind: {name: entry for name, entry in names.items() if not _is_builtin(entry)} for kind, names in _registry.items()}
    for module in DEFERRED_BUILTINS:
        _import_builtin(module)
    for kind, ep in _deferred_entry_points:
        _load_entry_point(kind, ep)
    for kind, entries in plugins.items():
        _registry[kind].update(entries)


def _is_builtin(entry: RegistryEntry) -> bool:
    return entry.origin == "builtin" or entry.origin.startswith("evtui.")


def _import_builtin(module: str) -> None:
    try:
        importlib.import_module(module)
    except Exception as error:  # a broken built-in must not hide every other one
        load_errors[module] = f"{type(error).__name__}: {error}"
        warnings.warn(f"evtui: built-in module {module} failed to import: {error}", stacklevel=2)


def register(kind: Kind, name: str, factory: Callable[..., Any], *, origin: str = "builtin") -> None:
    """Add (or replace) a factory under `name`."""
    _registry[kind][name] = RegistryEntry(kind, name, factory, origin)


def _load_entry_points(kind: Kind, *, deferred: bool = True) -> None:
    load_builtins(deferred=deferred)
    if kind in _entry_points_loaded:
        return
    _entry_points_loaded.add(kind)
    for ep in entry_points(group=ENTRY_POINT_GROUPS[kind]):
        if ep.value.split(":")[0] in DEFERRED_BUILTINS and not _deferred_loaded:
            _deferred_entry_points.append((kind, ep))  # pyproject lists built-ins too: loaded with them
            continue
        _load_entry_point(kind, ep)


def _load_entry_point(kind: Kind, ep: Any) -> None:
    try:
        factory = ep.load()
    except Exception as error:  # one broken plugin must not hide the rest
        load_errors[f"entry point {ep.name} = {ep.value}"] = f"{type(error).__name__}: {error}"
        warnings.warn(f"evtui: plugin {ep.name} = {ep.value} failed to load: {error}", stacklevel=2)
        return
    origin = "builtin" if ep.value.startswith("evtui.") else f"entry point {ep.value}"
    existing = _registry[kind].get(ep.name)
    if existing is None or existing.factory is not factory or origin != "builtin":
        register(kind, ep.name, factory, origin=origin)


def entries(kind: Kind) -> list[RegistryEntry]:
    """Every registered factory of `kind`, built-ins and plugins, sorted by name."""
    _load_entry_points(kind)
    return sorted(_registry[kind].values(), key=lambda entry: entry.name)


def lookup(kind: Kind, name: str) -> RegistryEntry:
    """The entry registered as `name`; UnknownNameError (with suggestions) if there is none."""
    alone = _lookup_builtin_alone(kind, name)
    if alone is not None:
        return alone
    if not _builtins_loaded and not _builtin_may_have(kind, lambda known: known == name):
        # No built-in has the name (a JSONL run's own score name, looked up by every re-score
        # check and by its default metrics): only a plugin can, and no built-in is imported.
        _load_plugin_entry_points(kind)
        if name in _registry[kind]:
            return _registry[kind][name]
        raise UnknownNameError(kind, name, _known_names(kind))
    _load_entry_points(kind, deferred=False)
    if name not in _registry[kind] and _deferred_may_have(kind, lambda known: known == name):
        load_builtins()  # the deferred built-ins (model-graded scorers) have it
    try:
        return _registry[kind][name]
    except KeyError:
        raise UnknownNameError(kind, name, _known_names(kind)) from None


def _deferred_may_have(kind: Kind, wanted: Callable[[str], bool]) -> bool:
    """Whether a deferred built-in not imported yet registers a name `wanted` accepts: the table of
    built-in homes names every built-in, so a name no built-in has (a JSONL run's own score name,
    looked up by every re-score check) is known missing without importing the grading code."""
    from evtui.scoring.specs.builtin_homes import BUILTIN_HOMES

    if _deferred_loaded:
        return False
    return any(module in DEFERRED_BUILTINS and wanted(name) for name, module in BUILTIN_HOMES[kind].items())


def _builtin_may_have(kind: Kind, wanted: Callable[[str], bool]) -> bool:
    """Whether a built-in (imported or not) has a name `wanted` accepts: the built-in homes table
    names every one (tests/test_registry_homes.py)."""
    from evtui.scoring.specs.builtin_homes import BUILTIN_HOMES

    return any(wanted(name) for name in BUILTIN_HOMES[kind])


def _known_names(kind: Kind) -> list[str]:
    """Every name of `kind` as after a full load (for an unknown name's message): the registered
    ones and the names of the built-ins not imported yet."""
    from evtui.scoring.specs.builtin_homes import BUILTIN_HOMES

    names = list(_registry[kind])
    if not _builtins_loaded:
        names += [name for name in BUILTIN_HOMES[kind] if name not in _registry[kind]]
    elif not _deferred_loaded:
        names += [name for name, module in BUILTIN_HOMES[kind].items() if module in DEFERRED_BUILTINS and name not in _registry[kind]]
    return names


def _load_plugin_entry_points(kind: Kind) -> None:
    """The plugins' entry points of `kind` (not evtui's own: those are the built-ins), once."""
    if kind in _plugin_entry_points_loaded:
        return
    _plugin_entry_points_loaded.add(kind)
    for ep in entry_points(group=ENTRY_POINT_GROUPS[kind]):
        if not ep.value.startswith("evtui."):  # evtui's own entry points are the built-ins
            _load_entry_point(kind, ep)


def namespaced_entries(kind: Kind, bare: str) -> list[RegistryEntry]:
    """The entries named `namespace:bare` (EvSys's `evsys:pass@3` for `pass@3`), as `entries` would
    list them, importing the deferred built-ins only when one of them has such a name."""
    def wanted(name: str) -> bool:
        return ":" in name and name.rpartition(":")[2] == bare

    if not _builtins_loaded and not _builtin_may_have(kind, wanted):
        _load_plugin_entry_points(kind)  # no built-in has such a name: only a plugin can
    else:
        _load_entry_points(kind, deferred=False)
        if _deferred_may_have(kind, wanted):
            load_builtins()
    return [entry for entry in _registry[kind].values() if wanted(entry.name)]


def lookup_if_known(kind: Kind, name: str) -> RegistryEntry | None:
    """lookup, or None when nothing has that name; a name that is no built-in is looked for among
    the plugins without importing the deferred built-ins (the model-graded scorers' HTTP client:
    0.3 s for every run whose score names are its own, as a JSONL run's are)."""
    from evtui.scoring.specs.builtin_homes import BUILTIN_HOMES

    if name not in BUILTIN_HOMES[kind]:
        if _builtins_loaded:
            _load_entry_points(kind, deferred=False)
        else:
            _load_plugin_entry_points(kind)  # only a plugin can have it: no built-in imported
        return _registry[kind].get(name)
    try:
        return lookup(kind, name)
    except UnknownNameError:
        return None


_plugin_entry_points_loaded: set[Kind] = set()


def _lookup_builtin_alone(kind: Kind, name: str) -> RegistryEntry | None:
    """Before the built-ins are loaded: import only the module of built-in `name` (builtin_homes.py)
    and the plugins' entry points, which outrank it as they do after a full load; None when
    `name` is not a built-in (the full load then says what there is)."""
    from evtui.scoring.specs.builtin_homes import BUILTIN_HOMES

    module = BUILTIN_HOMES[kind].get(name)
    if module is None or _builtins_loaded:
        return None
    plugins = {k: {n: entry for n, entry in names.items() if not _is_builtin(entry)} for k, names in _registry.items()}
    _import_builtin(module)
    _load_plugin_entry_points(kind)
    for k, entries in plugins.items():  # a file plugin registered before this import keeps its name
        _registry[k].update(entries)
    return _registry[kind].get(name)


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


def _constant_factory(made: Any) -> Callable[[], Any]:
    """A no-argument factory for an already-made scorer (AG2 functions are their own scorer)."""

    def factory() -> Any:
        return made

    factory.__name__ = getattr(made, "key", "scorer")
    factory.__doc__ = inspect.getdoc(getattr(made, "fn", None)) or ""
    return factory


def register_instance(kind: Kind, name: str, made: Any, *, origin: str = "builtin") -> None:
    """Register an already-made object (an AG2 scorer is its own instance) under `name`."""
    register(kind, name, _constant_factory(made), origin=origin)


AG2_PARAMETERS = frozenset({"inputs", "outputs", "reference_outputs", "trace", "task"})


def is_ag2_function(fn: Callable[..., Any]) -> bool:
    """True for a function whose parameters are all AG2 injectable names (and there is one at least)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return bool(params) and all(name in AG2_PARAMETERS for name in params)


def scorer(metrics: Any = None, name: str | None = None, **metadata: Any) -> Any:
    """Register a scorer, in either style.

    Inspect: `@scorer(metrics=[accuracy(), stderr()])` (or bare `@scorer`) on a factory returning
    `async def score(state, target)`. AG2: bare `@scorer` on a function whose parameters are
    AG2 names (`inputs`, `outputs`, `reference_outputs`, `trace`, `task`) — it becomes an
    `evtui.scoring.ag2.feedback.Scorer` (registered under its name) that grades one sample directly.
    """
    # Bare @scorer: the argument is the decorated function itself, not a made metric.
    if inspect.isfunction(metrics) and info(metrics) is None and name is None and not metadata:
        fn = metrics
        if is_ag2_function(fn):
            from evtui.scoring.ag2.feedback import Scorer as Ag2Scorer

            made = Ag2Scorer(fn)
            register_instance("scorer", made.key, made, origin=getattr(fn, "__module__", "builtin"))
            return made
        return _decorate("scorer", fn, None, metrics=None, options={})

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
