"""The total of an invoice: its lines, then the discount of its code, if any."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from .discounts import apply_discount, percent_for


@dataclass(frozen=True)
class Line:
    """One line of an invoice: how many of an article, at which unit price."""

    article: str
    quantity: int
    unit_price: float


def subtotal(lines: Sequence[Line]) -> float:
    """The sum of quantity times unit price over the lines, rounded to cents."""
    return round(sum(line.quantity * line.unit_price for line in lines), 2)


def invoice_total(lines: Sequence[Line], code: Optional[str] = None) -> float:
    """What the customer pays: the subtotal, less the discount of `code` when one is given."""
    amount = subtotal(lines)
    if code is None:
        return amount
    return apply_discount(amount, percent_for(code))
