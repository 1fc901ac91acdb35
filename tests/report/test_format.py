"""How numbers are written (``adlab._format``): one home for each, shared by every table."""

from __future__ import annotations

import math

from adlab._format import error_text


def test_an_error_is_written_in_two_digits_exact_zero_and_none_apart():
    assert error_text(3.21e-8) == "3.2e-08"
    assert error_text(0.0) == "0"  # exact, not "0.0e+00"
    assert error_text(None) == "-"  # not measured
    assert error_text(math.inf) == "inf"  # f(x + h) == f(x): said, not hidden
