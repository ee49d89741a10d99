"""load_yaml: every malformed document is a yaml.YAMLError (the parsers catch exactly that)."""

from __future__ import annotations

import pytest
import yaml

from evalhouse.common.yamls import load_yaml


@pytest.mark.parametrize(
    "text",
    [
        "- a: 0x_\n",  # the resolver takes it for hex, int() refuses it (found by the fuzz suite)
        "- n: 0b_\n",
        "[" * 20_000 + "]" * 20_000,  # nested too deeply
        "a: [1, 2\n",  # plain syntax error
    ],
)
def test_malformed_yaml_is_a_yaml_error(text: str) -> None:
    with pytest.raises(yaml.YAMLError):
        load_yaml(text)


def test_the_same_values_as_safe_load() -> None:
    text = "a: 1\nb: [x, 2.5, null, true]\nc: {d: '0x1f', e: 0x1f, f: 2024-05-01}\n"
    assert load_yaml(text) == yaml.safe_load(text)
    assert load_yaml(text)["c"]["e"] == 31
