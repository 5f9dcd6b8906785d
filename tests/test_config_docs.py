"""docs/configuration.md is generated from the config schema (docs/gen_config.py) and kept up to
date; every key of the schema carries a description (the Snakemake workflow template's convention)."""
import runpy
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _gen():
    return runpy.run_path(str(REPO / "docs" / "gen_config.py"))


def test_config_page_is_up_to_date():
    text = _gen()["render"]()
    assert (REPO / "docs" / "configuration.md").read_text() == text, \
        "docs/configuration.md is out of date: run .venv/bin/python docs/gen_config.py"


def test_every_schema_key_has_a_description():
    assert _gen()["undescribed"]() == [], "give these schema keys a description:"


def test_config_page_covers_every_key_and_section():
    gen = _gen()
    schema = gen["load_raw_schema"]()
    text = (REPO / "docs" / "configuration.md").read_text()
    sections = {part.split("\n", 1)[0]: part for part in text.split("\n## ")}
    for name, node in schema["properties"].items():
        if node.get("$ref") == "#/$defs/idmap":
            section = sections[f"`{name}.<id>`"]
            entry = node["additionalProperties"]
            keys = gen["_children"](schema, entry["items"] if entry.get("type") == "array" else entry)
        else:
            section, keys = sections["Top-level keys"], {name: node}
        for key, sub in keys.items():
            row = f"\n| `{key}` |"
            assert row in section, key
            cells = section.split(row, 1)[1].split("\n", 1)[0].split(" | ")
            assert cells[1] == gen["_default"](sub), key  # the default column: the schema's default


def test_defaults_on_the_page_are_the_ones_validation_fills_in():
    """The schema's top-level defaults are applied by validate_config (setdefault): the page shows
    what a config without the key gets."""
    from gssl.pipeline.config import load_schema

    text = (REPO / "docs" / "configuration.md").read_text()
    for name, node in load_schema()["properties"].items():
        if "default" in node:
            assert f"\n| `{name}` |" in text and _gen()["_default"](node) in text


def test_types_and_cells_render():
    gen = _gen()
    schema = {"$defs": {"id": {"type": "string"}}}
    assert gen["_type"](schema, {"type": "integer", "minimum": 1}) == "integer ≥ 1"
    assert gen["_type"](schema, {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}) == \
        "number in (0, 1)"
    assert gen["_type"](schema, {"type": ["integer", "null"], "minimum": 0}) == "integer ≥ 0 or `null`"
    assert gen["_type"](schema, {"x-gssl-registry": "solvers"}) == "a `solvers` name"
    assert gen["_type"](schema, {"$ref": "#/$defs/idlist"}) == "list of ids"
    assert gen["_md"]("a | b <id> `x <y>`\n  c") == "a \\| b &lt;id> `x <y>` c"
