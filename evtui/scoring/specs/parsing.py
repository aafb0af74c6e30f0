"""Scorer, metric and reducer specs: a call with literal arguments, parsed (never evaluated).

    match(location="any", numeric=True)     includes      pass_at_2
    stderr(cluster="category")              grouped(accuracy(), "category")
    evsys:pass@3                            pass@3

A spec is parsed with `ast`: only literals (str, numbers, bool, None, lists, tuples, dicts),
bare registered names and nested calls of registered names are allowed — no attribute access,
no operators, no eval. Arguments are checked against the factory's signature and type hints
so a typo names the parameter and the type it expects.
"""

from __future__ import annotations

import ast
import difflib
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Union

from evtui.scoring.specs import registry
from evtui.scoring.specs.registry import Kind, UnknownNameError


class SpecError(ValueError):
    """A spec that cannot be parsed or built; the message says what and, for names, lists close ones."""


class UnknownSpecNameError(SpecError):
    """A spec whose name nothing registered answers to (a SpecError, so callers may treat it as one)."""


@dataclass
class SpecCall:
    """A parsed spec: the registered name and its (already literal or nested) arguments."""

    name: str
    args: list[Any] = field(default_factory=list)
    kwargs: dict[str, Any] = field(default_factory=dict)
    called: bool = False  # written with parentheses

    def __str__(self) -> str:
        return format_call(self.name, self.args, self.kwargs) if self.called else self.name


# `evsys:pass@3`, `pass^3`, `mean_reward`: names that are not Python identifiers.
_PLAIN_NAME = re.compile(r"^(?:(?P<prefix>[A-Za-z_][\w.\-]*):)?(?P<name>[A-Za-z_][\w.\-]*(?:[@^]\d+)?)$")
_SUFFIX_K = re.compile(r"^(?P<base>.*?)_(?P<k>\d+)$")
_AT_K = re.compile(r"^(?P<base>.*?)(?P<op>[@^])(?P<k>\d+)$")


def parse(spec: str) -> SpecCall:
    """Parse a spec string into a SpecCall (nested specs become SpecCalls); SpecError if malformed."""
    if not isinstance(spec, str) or not spec.strip():
        raise SpecError(f"empty spec {spec!r}: expected a name like 'match' or a call like 'match(numeric=True)'")
    text = spec.strip()
    plain = _PLAIN_NAME.match(text)
    if plain and not text.isidentifier():  # `evsys:pass@3`, `weather-tool-used`, `style.polite`
        return SpecCall(text)
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as error:
        raise SpecError(f"cannot parse spec {spec!r}: {error.msg} (column {error.offset})") from None
    return _node(tree.body, spec, top=True)


def _node(node: ast.AST, spec: str, *, top: bool = False) -> Any:
    if isinstance(node, ast.Name):
        return SpecCall(node.id)
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name):
            raise SpecError(f"in spec {spec!r}: only registered names can be called (no attribute access)")
        args = [_node(arg, spec) for arg in node.args if not isinstance(arg, ast.Starred) or _unpacking(arg, spec)]
        kwargs = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                _unpacking(keyword.value, spec, "**")
            kwargs[keyword.arg] = _node(keyword.value, spec)
        return SpecCall(node.func.id, args, kwargs, called=True)
    if top:
        raise SpecError(f"spec {spec!r} must be a name or a call like name(arg=value)")
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd) and isinstance(node.operand, ast.Constant):
        value = node.operand.value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.List | ast.Tuple):
        items = [_node(item, spec) for item in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Dict):
        if any(key is None for key in node.keys):
            _bad(node, spec)
        return {_node(k, spec): _node(v, spec) for k, v in zip(node.keys, node.values, strict=True)}
    return _bad(node, spec)


def _unpacking(node: ast.AST, spec: str, stars: str = "*") -> Any:
    # `**{...}` holds a dict, which is allowed as a value: say what is refused, the unpacking.
    snippet = ast.get_source_segment(spec.strip(), node) or type(node).__name__
    snippet = snippet if snippet.startswith("*") else stars + snippet
    raise SpecError(f"in spec {spec!r}: {snippet!r} is not allowed; name each argument (name(arg=value)), no * or ** unpacking")


def _bad(node: ast.AST, spec: str) -> Any:
    snippet = ast.get_source_segment(spec.strip(), node) or type(node).__name__
    raise SpecError(
        f"in spec {spec!r}: {snippet!r} is not allowed; use literals (strings, numbers, True/False/None, "
        "lists, dicts) or registered names"
    )


def build(kind: Kind, spec: Any) -> Any:
    """Make the scorer/metric/reducer a spec describes; objects that are already made pass through."""
    if kind not in registry.KINDS:
        raise SpecError(f"unknown kind {kind!r}; expected one of {', '.join(registry.KINDS)}")
    if not isinstance(spec, str | SpecCall):
        return spec
    call = parse(spec) if isinstance(spec, str) else spec
    return _make(kind, call, str(spec))


def _make(kind: Kind, call: SpecCall, spec: str) -> Any:
    entry, implied = resolve(kind, call.name)
    kwargs = dict(implied)
    args = [_arg(kind, value, spec) for value in call.args]
    for key, value in call.kwargs.items():
        kwargs[key] = _arg(kind, value, spec)
    check_arguments(entry, args, kwargs, spec)
    try:
        return entry.factory(*args, **kwargs)
    except SpecError:
        raise
    except Exception as error:
        raise SpecError(f"{kind} {call.name!r} rejected its arguments in {spec!r}: {error}") from error


def _arg(kind: Kind, value: Any, spec: str) -> Any:
    """Nested specs are made: first as the same kind, then as any other kind."""
    if isinstance(value, SpecCall):
        kinds = [kind] + [other for other in ("metric", "scorer", "reducer") if other != kind]
        for candidate in kinds:
            try:
                resolve(candidate, value.name)  # type: ignore[arg-type]
            except SpecError:
                continue
            return _make(candidate, value, spec)  # type: ignore[arg-type]
        resolve(kind, value.name)  # raises with suggestions for the outer kind
    if isinstance(value, list):
        return [_arg(kind, item, spec) for item in value]
    if isinstance(value, tuple):
        return tuple(_arg(kind, item, spec) for item in value)
    if isinstance(value, dict):
        return {key: _arg(kind, item, spec) for key, item in value.items()}
    return value


def resolve(kind: Kind, name: str) -> tuple[registry.RegistryEntry, dict[str, Any]]:
    """The entry for `name` and arguments implied by the name (`pass_at_2` → k=2, `evsys:pass@3`)."""
    candidates = [name]
    prefix, _, bare = name.rpartition(":")
    if prefix:
        candidates.append(bare)
    for candidate in candidates:
        try:
            return registry.lookup(kind, candidate), {}
        except UnknownNameError:
            pass
    if not prefix:  # `pass@3` for `evsys:pass@3`, when only one namespace has it
        namespaced = registry.namespaced_entries(kind, name)
        if len(namespaced) == 1:
            return namespaced[0], {}
    # Inspect's reducer shorthand (`pass_at_2`, `at_least_3`) and EvSys's `pass@3` / `pass^3`.
    for candidate in candidates:
        for pattern, template in ((_SUFFIX_K, "{base}"), (_AT_K, "{base}{op}k")):
            found = pattern.match(candidate)
            if not found:
                continue
            base = template.format(**found.groupdict())
            try:
                entry = registry.lookup(kind, base)
            except UnknownNameError:
                continue
            if "k" in entry.signature.parameters:
                return entry, {"k": int(found["k"])}
    if kind == "metric":  # any EvSys `pass@<k>` / `pass^<k>`, not only the registered ones
        from evtui.scoring.evsys import metrics as evsys

        made_class = evsys.metric_class(bare if prefix else name)
        if made_class is not None:
            return registry.RegistryEntry("metric", name, made_class, origin="builtin"), {}
    try:
        registry.lookup(kind, name)
    except UnknownNameError as error:
        raise UnknownSpecNameError(str(error)) from None
    raise AssertionError("unreachable")  # pragma: no cover


# ---------------------------------------------------------------------------- argument checks


def check_arguments(entry: registry.RegistryEntry, args: list[Any], kwargs: dict[str, Any], spec: str) -> None:
    """SpecError naming the parameter when an argument is unknown, missing or of the wrong type."""
    signature = entry.signature
    params = signature.parameters
    takes_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
    for key in kwargs:
        if key not in params and not takes_kwargs:
            close = difflib.get_close_matches(key, list(params), n=3, cutoff=0.5)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            accepted = ", ".join(params) or "no arguments"
            raise SpecError(f"{entry.kind} {entry.name!r} has no parameter {key!r}.{hint} It accepts: {accepted} (in {spec!r})")
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as error:
        raise SpecError(f"{entry.kind} {entry.name!r}: {error} (in {spec!r}); signature: {entry.name}{signature}") from None
    hints = _type_hints(entry.factory)
    for key, value in bound.arguments.items():
        param = params[key]
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or key not in hints:
            continue
        if isinstance(value, str) and _wants_callable(hints[key]):
            # Inspect records a function argument by its name (`f1(answer_fn="extract_answer")`):
            # the function lives in the task's code, which evtui does not import or run.
            raise SpecError(
                f"{entry.kind} {entry.name!r}: {key}={value!r} names a function in the task's code, "
                f"which evtui cannot run (in {spec!r})"
            )
        if not _matches(value, hints[key]):
            raise SpecError(
                f"{entry.kind} {entry.name!r}: parameter {key!r} expects {_describe(hints[key])}, "
                f"got {value!r} (in {spec!r})"
            )


def _type_hints(factory: Callable[..., Any]) -> dict[str, Any]:
    target = inspect.unwrap(factory)
    try:
        return typing.get_type_hints(target)
    except Exception:
        pass
    # One unresolvable annotation (a TYPE_CHECKING import) must not disable the other checks.
    hints: dict[str, Any] = {}
    namespace = getattr(target, "__globals__", {})
    for name, annotation in getattr(target, "__annotations__", {}).items():
        probe = types.SimpleNamespace(__annotations__={name: annotation})
        try:
            hints.update(typing.get_type_hints(probe, globalns=dict(namespace)))
        except Exception:
            continue
    return hints


def _wants_callable(hint: Any) -> bool:
    """The parameter takes a function (and not also text)."""
    options = typing.get_args(hint) if typing.get_origin(hint) in (Union, types.UnionType) else (hint,)
    if any(option is str for option in options):
        return False
    return any((typing.get_origin(option) or option) in (Callable, typing.Callable) for option in options)


def _matches(value: Any, hint: Any) -> bool:
    if hint is Any or hint is inspect.Parameter.empty:
        return True
    origin = typing.get_origin(hint)
    if origin is Literal:
        return any(value == choice and type(value) is type(choice) for choice in typing.get_args(hint))
    if origin in (Union, types.UnionType):
        return any(_matches(value, option) for option in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    target = origin or hint
    if target in (list, Sequence, typing.Sequence) or target is tuple:
        return isinstance(value, list | tuple) and not isinstance(value, str)
    if target in (dict, Mapping, typing.Mapping):
        return isinstance(value, dict)
    return True  # callables, protocols, classes: a made nested object is accepted as is


def _describe(hint: Any) -> str:
    origin = typing.get_origin(hint)
    if origin is Literal:
        return "one of " + ", ".join(repr(choice) for choice in typing.get_args(hint))
    if origin in (Union, types.UnionType):
        return " or ".join(_describe(option) for option in typing.get_args(hint))
    if hint is type(None):
        return "None"
    if hint is float:
        return "a number (float)"
    # Forms show these: words, not `collections.abc.Callable[[Union[str, …` (issue 31).
    if hint is Any:
        return "any literal"
    if origin is Callable or hint is Callable:
        return "a registered function (a spec like name())"
    if origin in (list, tuple, Sequence) or hint in (list, tuple):
        items = [item for item in typing.get_args(hint) if item is not Ellipsis]
        return "a list" + (" of " + " or ".join(_plural(item) for item in items) if items else "")
    if origin in (dict, Mapping) or hint is dict:
        return "a dict"
    if isinstance(hint, type):
        return {"bool": "True or False", "int": "an integer (int)", "str": "a string (str)"}.get(hint.__name__, hint.__name__)
    return str(hint).replace("typing.", "")


def _plural(hint: Any) -> str:
    """A list item's type in words: `strings`, `dicts`, …"""
    if typing.get_origin(hint) in (Union, types.UnionType):
        return " or ".join(_plural(option) for option in typing.get_args(hint))
    if typing.get_origin(hint) in (dict, Mapping) or hint is dict:
        return "dicts"
    names = {str: "strings", int: "integers", float: "numbers", bool: "True/False values"}
    return names.get(hint, _describe(hint))


def format_call(name: str, args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None) -> str:
    """A spec string for `name(*args, **kwargs)` (literal reprs), e.g. for saving configurations."""
    parts = [repr(arg) for arg in args] + [f"{key}={value!r}" for key, value in (kwargs or {}).items()]
    return f"{name}({', '.join(parts)})" if parts else name


def spec_of(made: Any) -> str | None:
    """The spec that would make `made` again (from its registry Info), when it has one."""
    made_info = registry.info(made)
    if made_info is None:
        return None
    params = {k: v for k, v in made_info.params.items() if _is_literal(v)}
    entry = registry.lookup(made_info.kind, made_info.name)
    defaults = {k: p.default for k, p in entry.signature.parameters.items()}
    changed = {k: v for k, v in params.items() if defaults.get(k, inspect.Parameter.empty) != v}
    return format_call(made_info.name, (), changed)


def _is_literal(value: Any) -> bool:
    if value is None or isinstance(value, str | int | float | bool):
        return True
    if isinstance(value, list | tuple):
        return all(_is_literal(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_literal(v) for k, v in value.items())
    return False
