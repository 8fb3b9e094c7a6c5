"""The shopping cart: lines keyed by SKU, each with a unit price and a quantity."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class CartLine:
    """One article in the cart: its unit price and how many of it."""

    price: float
    quantity: int


class Cart:
    """A shopping cart. Adding an SKU that is already in the cart raises its quantity."""

    def __init__(self) -> None:
        """An empty cart."""
        self._lines: dict[str, CartLine] = {}

    def add(self, sku: str, price: float, quantity: int = 1) -> None:
        """Put `quantity` of `sku` at `price` each into the cart."""
        if quantity < 1:
            raise ValueError("quantity must be at least 1")
        line = self._lines.setdefault(sku, CartLine(price, 0))
        line.quantity += quantity

    def remove(self, sku: str, quantity: int = 1) -> None:
        """Take `quantity` of `sku` out of the cart; the line goes when none is left."""
        line = self._lines[sku]
        line.quantity -= quantity
        if line.quantity <= 0:
            del self._lines[sku]

    def quantity(self, sku: str) -> int:
        """How many of `sku` the cart holds (0 when none)."""
        line = self._lines.get(sku)
        return line.quantity if line else 0

    def skus(self) -> list[str]:
        """The SKUs in the cart, in the order they were first added."""
        return list(self._lines)

    def total(self) -> float:
        """The amount to pay: unit price times quantity, summed over the lines, rounded to cents."""
        return round(sum(line.price + line.quantity for line in self._lines.values()), 2)
