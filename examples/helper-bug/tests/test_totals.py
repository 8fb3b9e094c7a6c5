"""Tests of invoice totals, with and without discount codes."""
from invoicing.totals import Line, invoice_total, subtotal

LINES = [Line("pencil", 10, 0.5), Line("notebook", 3, 5.0)]


def test_subtotal_multiplies_quantity_by_unit_price():
    assert subtotal(LINES) == 20.0


def test_total_without_code_is_the_subtotal():
    assert invoice_total(LINES) == 20.0


def test_total_of_an_empty_invoice_is_zero():
    assert invoice_total([]) == 0.0


def test_discount_code_lowers_the_total():
    assert invoice_total(LINES, "SAVE10") == 18.0
