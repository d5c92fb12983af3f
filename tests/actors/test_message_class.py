"""``@message``: what ``@dataclass(frozen=True, slots=True)`` guaranteed the messages, kept."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from typing import Any

import pytest

from zcode_acp.actors import messages
from zcode_acp.actors.message_class import FIELDS, message
from zcode_acp.actors.messages import ClientRequest, ClientsChanged, Consumed, Owed, Prompt, Reply, RequestHandle, Shutdown


@message
class Point:
    x: int
    y: int = 0
    tags: list[str] = dataclasses.field(default_factory=list)


@message
class Base:
    a: int


@message
class Derived(Base):
    b: str = "b"


def test_fields_positional_keyword_and_defaults():
    assert (Point(1).x, Point(1).y, Point(1).tags) == (1, 0, [])
    assert Point(y=2, x=1) == Point(1, 2)
    assert Point(1).tags is not Point(1).tags  # a fresh list from the factory each time
    assert Point(1, tags=["t"]).tags == ["t"]
    with pytest.raises(TypeError, match="x"):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, 2, [], 4)  # type: ignore[call-arg]
    assert str(inspect.signature(Reply)) == "(request_id, result=None, error=None)"


def test_a_base_message_s_fields_come_first():
    assert Derived(1) == Derived(1, "b")
    assert Derived.__match_args__ == ("a", "b")
    assert Derived.__slots__ == ("b",) and Base.__slots__ == ("a",)
    assert isinstance(Derived(1), Base)
    prompt = Prompt("conn", 7, "prompt")  # type: ignore[arg-type]
    assert (prompt.conn, prompt.request_id, prompt.echo) == ("conn", 7, "")
    assert isinstance(prompt, ClientRequest) and isinstance(prompt, Owed)


def test_frozen_and_slotted():
    point = Point(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del point.x  # type: ignore[misc]
    with pytest.raises(AttributeError):
        point.other = 1  # type: ignore[attr-defined]
    assert not hasattr(point, "__dict__")


def test_equality_and_hash_are_field_wise_and_per_class():
    assert Reply(1, {"a": 1}) == Reply(1, {"a": 1})
    assert Reply(1) != Reply(2)
    assert Reply(1, None, None) != messages.Resumed(1, None)  # same values, another class
    assert hash(Shutdown("x")) == hash(Shutdown("x"))
    assert {Shutdown("x"), Shutdown("x"), Shutdown("y")} == {Shutdown("x"), Shutdown("y")}
    assert messages.ListSessions() == messages.ListSessions()
    with pytest.raises(TypeError):
        hash(Reply(1, {"a": 1}))  # a dict field, as with a frozen dataclass


def test_eq_false_is_identity():
    handle = RequestHandle(1, 2)
    assert handle == handle and handle != RequestHandle(1, 2)
    assert len({handle, RequestHandle(1, 2)}) == 2


def test_repr_names_the_class_and_every_field():
    assert repr(Reply(1, error={"code": 1})) == "Reply(request_id=1, result=None, error={'code': 1})"
    assert repr(messages.ListSessions()) == "ListSessions()"


def test_copy_and_pickle_remake_through_init():
    clients = ClientsChanged([], {"fs": True}, {"urn": {}})
    assert copy.copy(clients) == clients and copy.deepcopy(clients) == clients
    assert pickle.loads(pickle.dumps(Shutdown("bye"))) == Shutdown("bye")


def test_a_field_without_default_after_one_with_is_refused():
    with pytest.raises(TypeError, match="'b'"):
        @message
        class Wrong:
            a: int = 0
            b: int


def test_every_message_is_made_by_message():
    """A class added with ``@dataclass`` would lose its message base's fields (they are not dataclass fields)."""
    made = [value for value in vars(messages).values()
            if isinstance(value, type) and value.__module__.startswith(messages.__name__ + ".") and value not in (Owed, Consumed)
            and not getattr(value, "_is_protocol", False)]
    assert len(made) > 80
    not_made: list[Any] = [cls.__name__ for cls in made if FIELDS not in cls.__dict__]
    assert not_made == []


def test_a_mutable_default_is_refused_as_dataclasses_refuse_it():
    with pytest.raises(TypeError, match="mutable default"):
        @message
        class Shared:
            items: list[int] = []


@pytest.mark.parametrize("option", [{"init": False}, {"repr": False}, {"compare": False}, {"kw_only": True},
                                    {"hash": False}, {"metadata": {"a": 1}}])
def test_field_options_mypy_would_honour_are_refused(option):
    with pytest.raises(TypeError, match="only default or default_factory"):
        @message
        class Optioned:
            a: int = dataclasses.field(default=0, **option)
