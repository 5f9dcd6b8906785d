"""Config files: strict YAML (a key given twice is an error) and Snakemake's merge of several."""

from __future__ import annotations

from pathlib import Path

import yaml

from ..errors import ConfigError


class _StrictLoader(yaml.SafeLoader):
    """A YAML loader that refuses a key given twice in one mapping (plain YAML keeps the last one
    silently: ``k: 10`` then ``k: 30`` would build a k = 30 graph)."""


def _strict_mapping(loader, node, deep=False):
    seen = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":  # <<: *base: its keys may be overridden
            continue
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise ConfigError(f"key {key!r} is given twice in one mapping (lines {seen[key] + 1} and "
                              f"{key_node.start_mark.line + 1}): keep one")
        seen[key] = key_node.start_mark.line
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _strict_mapping)


def load_yaml(path) -> dict:
    """A config file as a mapping. ConfigError, naming the file, for a YAML syntax error, a key
    given twice in one mapping, an empty file, or a top level that is not a mapping."""
    try:
        data = yaml.load(Path(path).read_text(), Loader=_StrictLoader)  # noqa: S506 - a SafeLoader
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from None
    if data is None:  # Snakemake refuses an empty config file too
        raise ConfigError(f"{path} is empty (or only comments): give config keys (datasets:, "
                          "methods:, ...) or leave the file out")
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of config keys (datasets:, "
                          f"methods:, ...), got a {type(data).__name__}")
    return data


def load_yaml_files(paths) -> dict:
    """Config files merged in order, as Snakemake merges several ``--configfile``: a later file's
    mapping updates an earlier one's key by key, at every depth; anything else replaces it."""
    config: dict = {}
    for path in paths:
        deep_update(config, load_yaml(path))
    return config


def deep_update(base: dict, new: dict) -> None:
    """Update ``base`` with ``new`` key by key at every depth (a non-mapping replaces)."""
    for k, v in new.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            deep_update(base[k], v)
        else:
            base[k] = v
