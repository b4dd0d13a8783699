"""The generic registry every extension point uses."""

from __future__ import annotations

import sys
import types

import pytest
from pydantic import BaseModel, ConfigDict, Field

from arcmemo.core import registry as reg
from arcmemo.core.registry import ComponentSpec, Registry, RegistryError


class ToyOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    size: int = 3
    label: str | None = None


def make() -> Registry[object]:
    toys: Registry[object] = Registry("toy")

    @toys.register("box", options=ToyOptions)
    class Box:
        """A box of some size."""

        def __init__(self, options: ToyOptions, *, colour: str = "red") -> None:
            self.options = options
            self.colour = colour

    return toys


def test_create_passes_validated_options_and_context() -> None:
    toys = make()
    box = toys.create(ComponentSpec(name="box", options={"size": "5"}), colour="blue")
    assert box.options.size == 5 and box.colour == "blue"  # type: ignore[attr-defined]
    assert toys.create("box").options.size == 3  # type: ignore[attr-defined]


def test_spec_spells_out_every_option() -> None:
    assert make().spec("box", {"size": 4}) == ComponentSpec(
        name="box", options={"size": 4, "label": None}
    )


def test_unknown_name_and_bad_options_are_one_line_errors() -> None:
    toys = make()
    with pytest.raises(
        RegistryError, match=r"unknown toy 'bax' \(did you mean 'box'\?\); known: box"
    ):
        toys.get("bax")
    with pytest.raises(
        RegistryError, match=r"toy 'box': colour: Extra inputs.*its options: size, label"
    ):
        toys.options("box", {"colour": "red"})
    with pytest.raises(RegistryError, match=r"size: Input should be a valid integer"):
        toys.spec("box", {"size": "big"})


def test_a_second_factory_under_a_taken_name_is_refused() -> None:
    toys = make()
    with pytest.raises(RegistryError, match="already registered"):

        @toys.register("box")
        class Other:
            pass

    toys.unregister("box")
    assert toys.names() == []


def test_builtin_modules_load_lazily_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("toy_lazy_module")
    lazy: Registry[object] = Registry("toy", modules={"lazy": "toy_lazy_module"})
    imported = []

    def exec_module() -> None:
        imported.append(True)
        lazy.register("lazy")(lambda options: "built")

    monkeypatch.setitem(sys.modules, "toy_lazy_module", module)
    # The module is "imported" when the name is first asked for.
    monkeypatch.setattr(reg.importlib, "import_module", lambda name: exec_module())
    assert lazy.names() == ["lazy"] and not imported
    assert lazy.create("lazy") == "built" and imported


def test_missing_optional_package_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    lazy: Registry[object] = Registry(
        "model provider",
        modules={"gpu": "toy_gpu_provider"},
        install_hints={"gpu": ("toy_gpu_sdk", "pip install toy-gpu-sdk")},
    )

    def fail(name: str) -> None:
        raise ModuleNotFoundError("no module", name="toy_gpu_sdk")

    monkeypatch.setattr(reg.importlib, "import_module", fail)
    with pytest.raises(reg.ComponentUnavailableError, match="pip install toy-gpu-sdk"):
        lazy.get("gpu")


def test_plugins_from_the_entry_point_group_are_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    toys: Registry[object] = Registry("toy")

    class Point:
        name = "third_party"
        value = "third_party.plugin"

        def load(self) -> None:
            toys.register("plugged")(lambda options: "from a plugin")

    import importlib.metadata

    monkeypatch.setattr(reg, "_plugins_loaded", False)
    monkeypatch.setattr(
        importlib.metadata,
        "entry_points",
        lambda group: [Point()] if group == reg.PLUGIN_GROUP else [],
    )
    assert "plugged" in toys.names()
    assert toys.create("plugged") == "from a plugin"


def test_help_lists_summaries_and_options() -> None:
    toys = make()
    toys.register("cube")(lambda options: "cube")
    assert toys.help() == "box: A box of some size [options: size=3, label=None]\ncube: "


def test_help_shows_defaults_built_by_a_factory() -> None:
    class Limits(BaseModel):
        seconds: float = 1.0

    class Nested(BaseModel):
        tags: list[str] = Field(default_factory=lambda: ["a"])
        limits: Limits = Field(default_factory=Limits)

    toys = Registry[object]("toy")
    toys.register("sack", options=Nested)(lambda options: "sack")
    assert toys.help() == "sack:  [options: tags=['a'], limits=<Limits>]"
    # every registry's help, as `arcmemo run --help` prints it
    from arcmemo.sandbox import SANDBOXES

    assert "PydanticUndefined" not in SANDBOXES.help()


class Shape:
    """A toy kind whose classes declare a capability."""

    name: str
    corners: int = 0


def test_an_entry_gives_its_class_with_the_registered_name_and_capabilities() -> None:
    shapes: Registry[Shape] = Registry("shape")

    @shapes.register("square")
    class Square(Shape):
        """Four corners."""

        corners = 4

    entry = shapes.get("square")
    assert entry.cls is Square and entry.cls.corners == 4
    assert Square.name == "square"  # written once, at registration


def test_a_factory_names_the_class_it_builds_for_its_capabilities() -> None:
    shapes: Registry[Shape] = Registry("shape")

    class Triangle(Shape):
        corners = 3

    shapes.register("triangle", cls=Triangle)(lambda options: Triangle())
    shapes.register("blob")(lambda options: Shape())
    assert shapes.get("triangle").cls.corners == 3 and Triangle.name == "triangle"
    with pytest.raises(RegistryError, match="shape 'blob' is registered as a bare factory"):
        shapes.get("blob").cls  # noqa: B018


def test_a_class_named_otherwise_than_its_registration_is_refused() -> None:
    shapes: Registry[Shape] = Registry("shape")

    class Circle(Shape):
        name = "circle"

    with pytest.raises(RegistryError, match=r"class .*Circle is already named 'circle'"):
        shapes.register("round")(Circle)
