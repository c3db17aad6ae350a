"""A YAML loader that remembers on which line each mapping, key and list item starts."""

from __future__ import annotations

import yaml


class LineDict(dict):
    """A mapping with `.line` (where it starts) and `.key_lines` (line of each key)."""

    line: int = 1
    key_lines: dict


class LineList(list):
    """A sequence with `.line` and `.item_lines` (line of each item)."""

    line: int = 1
    item_lines: list


class DuplicateKey(Exception):
    def __init__(self, key: str, line: int, first_line: int) -> None:
        super().__init__(key)
        self.key, self.line, self.first_line = key, line, first_line


class LineLoader(yaml.SafeLoader):
    pass


def _map(loader: LineLoader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    out = LineDict()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if key in out:
            raise DuplicateKey(str(key), line, out.key_lines[key])
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines[key] = line
    return out


def _seq(loader: LineLoader, node: yaml.SequenceNode) -> LineList:
    out = LineList(loader.construct_object(n, deep=True) for n in node.value)
    out.line = node.start_mark.line + 1
    out.item_lines = [n.start_mark.line + 1 for n in node.value]
    return out


LineLoader.add_constructor("tag:yaml.org,2002:map", _map)
LineLoader.add_constructor("tag:yaml.org,2002:seq", _seq)


def load(text: str):
    return yaml.load(text, Loader=LineLoader)  # noqa: S506 - SafeLoader subclass
