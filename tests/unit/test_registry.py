"""The one registry shape: add once, look up by name or alias, unknown names say what exists."""

import pytest

from humeval.errors import DataError, HumevalError
from humeval.registry import Registry


def _colours() -> Registry[str]:
    reg = Registry[str]("colour", "style.colour", error=DataError)
    reg.add("red", "#f00", summary="stop signs", aliases=("rot",))
    reg.add("green", "#0f0", summary="go")
    return reg


def test_lookup_by_name_and_alias():
    reg = _colours()
    assert reg.get("red") == "#f00" and reg.get("rot") == "#f00"
    assert reg.canonical("rot") == "red"
    assert reg.names() == ("red", "green") and reg.all_names() == ("red", "green", "rot")
    assert "rot" in reg and "blue" not in reg and len(reg) == 2 and list(reg) == ["red", "green"]


def test_unknown_name_names_the_field_the_value_and_the_nearest():
    with pytest.raises(DataError) as err:
        _colours().get("gren")
    assert str(err.value) == "style.colour: unknown colour 'gren'. Did you mean 'green'? Available: green, red, rot"
    assert isinstance(err.value, HumevalError)


def test_a_name_is_registered_once():
    reg = _colours()
    with pytest.raises(ValueError, match="'rot' is registered twice"):
        reg.add("rot", "#f00", summary="again")


def test_decorator_help_and_markdown():
    reg = Registry[type]("shape", "shapes")

    @reg.register("box", summary="four sides")
    class Box:
        pass

    assert reg.get("box") is Box and reg.help_text() == "box"
    assert reg.markdown().splitlines()[2] == "| `box` |  | four sides |"
