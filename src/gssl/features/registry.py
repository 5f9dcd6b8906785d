"""The preprocessing steps a config may name: a new step is a :class:`~gssl.features.step.Step`
subclass in this package, listed here."""

from __future__ import annotations

from .projection import PCAStep, RandomProjection
from .scaling import MinMax, Normalize, Standardize
from .step import schema_constraints

STEPS: dict[str, type] = {cls.name: cls for cls in (Standardize, MinMax, Normalize, PCAStep,
                                                     RandomProjection)}


def fill_step_schema(prep_step: dict) -> None:
    """Fill the config schema's ``prep_step`` block (descriptions and types, as written) with what
    the step classes declare: required parameters, enums, bounds and defaults; a step the schema
    does not describe gets its class's docstring and takes any mapping."""
    one_step = next(alt for alt in prep_step["oneOf"] if alt.get("type") == "object")["properties"]
    for name, cls in STEPS.items():
        node = one_step.setdefault(name, {"description": " ".join(cls.__doc__.split()),
                                          "type": ["object", "null"]})
        mapping = next((alt for alt in node.get("oneOf", []) if "properties" in alt), node)
        if cls.required:
            mapping["required"] = list(cls.required)
        for key, prop in mapping.get("properties", {}).items():
            prop.update(schema_constraints(cls._parameter_constraints[key]))
            if key in cls.defaults:
                prop["default"] = cls.defaults[key]
        if cls.shorthand:
            short = next(alt for alt in node["oneOf"] if "properties" not in alt)
            short.update(schema_constraints(cls._parameter_constraints[cls.shorthand]))
