"""Tests of discount codes."""
import pytest

from invoicing.discounts import percent_for


def test_codes_are_case_insensitive():
    assert percent_for("save10") == percent_for("SAVE10") == 10


def test_unknown_code_is_refused():
    with pytest.raises(KeyError, match="BOGUS"):
        percent_for("BOGUS")
