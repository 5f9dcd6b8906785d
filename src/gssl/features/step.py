"""What a preprocessing step is: one class that declares its name, its parameters (type,
default, bound, description: the config schema's ``prep_step`` entries and docs/configuration.md
are generated from them), checks their values, tells the width of its output from its input's
(so ``gssl config check`` refuses a chain before any job, in the words the job would use) and
applies itself. A new step is a subclass in a module of this package, declared with
``@register``; ``chain.py`` imports the modules that hold steps.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..errors import ConfigError


@dataclass(frozen=True)
class Param:
    """One parameter of a step: its JSON-schema ``type`` (or ``enum``), bounds, default."""

    description: str
    schema: dict                 # e.g. {"type": "integer", "minimum": 1} or {"enum": [...]}
    default: Any = None          # None: no default (required, or computed from the data)


@dataclass
class Shape:
    """What the config check knows of the features a step receives: rows ``n`` (exact, or an
    upper bound when a class view may drop some), columns ``d`` (None: unknown), and whether they
    are sparse (None: unknown, dense or CSR)."""

    n: int
    d: int | None
    sparse: bool | None
    n_exact: bool = True


class Step:
    """A preprocessing step. Subclasses set the class attributes and override ``output`` (the
    shape rule, raising ConfigError with the job's message) and ``apply``."""

    name: ClassVar[str]
    description: ClassVar[str]
    params: ClassVar[dict[str, Param]] = {}
    required: ClassVar[tuple[str, ...]] = ()
    shorthand: ClassVar[str | None] = None  # {step: value} is short for {step: {shorthand: value}}
    # modules beside its own whose code its output depends on (in a features job's code hash)
    code_modules: ClassVar[tuple[str, ...]] = ()
    # keeps arrays beside its output (``self.artifacts`` after apply: a network's weights and its
    # loss per epoch), which the features file stores and the logging job and the report show
    keeps_artifacts: ClassVar[bool] = False

    def __init__(self, **params):
        self.p = params

    def get(self, key: str):
        return self.p.get(key, self.params[key].default)

    # -- declared once, read by the validation, the schema and the docs ----------------------------
    @classmethod
    def json_schema(cls) -> dict:
        node: dict = {"description": cls.description}
        # a step without required parameters may be given bare (``step:``, ``step: null``)
        body: dict = {"type": "object" if cls.required else ["object", "null"],
                      "additionalProperties": False,
                      "properties": {k: {"description": p.description, **_public(p.schema),
                                         **({"default": p.default} if p.default is not None else {})}
                                     for k, p in cls.params.items()}}
        if cls.required:
            body["required"] = list(cls.required)
        if cls.shorthand:
            node["oneOf"] = [_public(cls.params[cls.shorthand].schema), body]
        else:
            node.update(body)
        return node

    def check(self) -> str | None:
        """The first parameter value this step refuses (what is wrong), or None."""
        for key in self.required:
            if key not in self.p:
                return self.missing_message(key)
        for key, value in self.p.items():
            problem = _check_value(key, value, self.params[key].schema)
            if problem:
                return problem
        return None

    def missing_message(self, key: str) -> str:
        return f"{self.name} needs {key}"

    # -- behaviour ---------------------------------------------------------------------------------
    def output(self, shape: Shape) -> Shape:
        """The shape after this step (ConfigError with the job's message where it would refuse)."""
        return shape

    def apply(self, X, seed: int):
        raise NotImplementedError


def _public(schema):
    """A parameter's schema without gssl's own keys (its refusal message)."""
    if isinstance(schema, dict):
        return {k: _public(v) for k, v in schema.items() if k != "x-message"}
    if isinstance(schema, list):
        return [_public(v) for v in schema]
    return schema


def _check_value(key: str, value, schema: dict) -> str | None:
    """A value against the small JSON-schema vocabulary the steps use (enum, integer/number with
    minimum/exclusiveMinimum, boolean, a pair, an alternative of these via anyOf)."""
    if "anyOf" in schema:
        problems = [_check_value(key, value, alt) for alt in schema["anyOf"]]
        return None if any(p is None for p in problems) else schema.get("x-message", problems[0]).format(
            key=key, value=value)
    if "enum" in schema:
        if value not in schema["enum"]:
            return schema.get("x-message", "{key} must be one of {allowed}, got {value!r}").format(
                key=key, value=value, allowed=list(schema["enum"]))
        return None
    kind = schema.get("type")
    message = schema.get("x-message")
    if kind == "integer":
        ok = (not isinstance(value, bool) and isinstance(value, numbers.Integral)
              and value >= schema.get("minimum", value))
        return None if ok else (message or "{key} must be a positive integer, got {value!r}").format(
            key=key, value=value)
    if kind == "number":
        ok = not isinstance(value, bool) and isinstance(value, numbers.Real)
        ok = ok and ("exclusiveMinimum" not in schema or value > schema["exclusiveMinimum"])
        ok = ok and value >= schema.get("minimum", value)
        return None if ok else (message or "{key} must be a number, got {value!r}").format(
            key=key, value=value)
    if kind == "boolean":
        return None if isinstance(value, bool) else f"{key} must be true or false, got {value!r}"
    if kind == "string":
        return None if isinstance(value, str) else f"{key} must be a string, got {value!r}"
    return None


def step_error(i: int, step, what: str) -> ConfigError:
    return ConfigError(f"preprocessing step {i} ({step!r}): {what}")


@dataclass
class Registry:
    """Step name -> Step class, in declaration order (the order the docs list them)."""

    classes: dict[str, type[Step]] = field(default_factory=dict)

    def register(self, cls: type[Step]) -> type[Step]:
        self.classes[cls.name] = cls
        return cls


STEP_CLASSES = Registry()
register = STEP_CLASSES.register  # the decorator a step's class is declared with
