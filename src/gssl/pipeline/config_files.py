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


# a config is data: its nodes once aliases are expanded (the default config has a few hundred; a
# "billion laughs" of nested aliases has 10^9 and costs minutes wherever it is walked)
MAX_NODES = 100_000
YTE_KEY = "__use_yte__"  # Snakemake's switch for YAML templating (YTE): Python run at load time


def load_yaml(path) -> dict:
    """A config file as a mapping. ConfigError, naming the file, for a YAML syntax error, a key
    given twice in one mapping, an empty file, a top level that is not a mapping, aliases that
    expand past :data:`MAX_NODES` nodes, or YAML templating (``__use_yte__``: gssl configs are
    data, never code; see docs/configuration.md, "What a config can do")."""
    try:
        loader = _StrictLoader(Path(path).read_text())
        try:
            node = loader.get_single_node()
            if node is not None:
                n = _expanded_size(node, {}, set())
                if n > MAX_NODES:
                    raise ConfigError(f"its aliases expand to {n:,} or more nodes (at most {MAX_NODES:,}): "
                                      "a config is data; write it out, or use fewer nested aliases")
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply (or an alias refers to itself)") from None
    if isinstance(data, dict) and YTE_KEY in data:
        raise ConfigError(f"{path}: {YTE_KEY} turns on YAML templating (YTE), which runs Python code "
                          "when the file is loaded; gssl configs are data: remove it and write the values "
                          "out (note: Snakemake has already run the template when it loaded the file)")
    if data is None:  # Snakemake refuses an empty config file too
        raise ConfigError(f"{path} is empty (or only comments): give config keys (datasets:, "
                          "methods:, ...) or leave the file out")
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of config keys (datasets:, "
                          f"methods:, ...), got a {type(data).__name__}")
    return data


def _expanded_size(node, sizes: dict, active: set) -> int:
    """The number of nodes ``node`` stands for once every alias is expanded (an alias is the very
    node object its anchor made: counted once per use, computed once), stopping past MAX_NODES."""
    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in active:
        raise ConfigError("an alias refers to a node that contains it (a recursive structure)")
    active.add(key)
    total = 1
    if isinstance(node, yaml.SequenceNode):
        children = node.value
    elif isinstance(node, yaml.MappingNode):
        children = [n for pair in node.value for n in pair]
    else:
        children = []
    for child in children:
        total += _expanded_size(child, sizes, active)
        if total > MAX_NODES:
            break
    active.discard(key)
    sizes[key] = total
    return total


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
