"""Tests of the shopping cart."""
import pytest

from inventory.cart import Cart


def test_adding_twice_raises_the_quantity():
    cart = Cart()
    cart.add("apple", 0.5)
    cart.add("apple", 0.5, quantity=2)
    assert cart.quantity("apple") == 3
    assert cart.skus() == ["apple"]


def test_removing_everything_drops_the_line():
    cart = Cart()
    cart.add("pear", 0.8, quantity=2)
    cart.remove("pear", quantity=2)
    assert cart.skus() == []
    assert cart.quantity("pear") == 0


def test_adding_nothing_is_refused():
    with pytest.raises(ValueError):
        Cart().add("plum", 0.3, quantity=0)


def test_empty_cart_costs_nothing():
    assert Cart().total() == 0


def test_total_multiplies_price_by_quantity():
    cart = Cart()
    cart.add("apple", 0.5, quantity=4)
    cart.add("melon", 2.25)
    assert cart.total() == 4.25
