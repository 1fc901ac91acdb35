"""How numbers are written (``adlab._format``): one home for each, shared by every table."""

from __future__ import annotations

import math

import pytest

from adlab._format import error_text, human_bytes, parse_bytes


def test_an_error_is_written_in_two_digits_exact_zero_and_none_apart():
    assert error_text(3.21e-8) == "3.2e-08"
    assert error_text(0.0) == "0"  # exact, not "0.0e+00"
    assert error_text(None) == "-"  # not measured
    assert error_text(math.inf) == "inf"  # f(x + h) == f(x): said, not hidden


def test_sizes_are_written_in_decimal_units_kb_mb_gb():
    """1 KB = 1000 bytes (the docstring says so): 3.2e9 bytes read 3.2 GB, not 2.98."""
    assert human_bytes(512) == "512 B"
    assert human_bytes(7_800) == "7.8 KB"
    assert human_bytes(40e6) == "40 MB"
    assert human_bytes(3.2e9) == "3.2 GB"
    assert human_bytes(1.5e12) == "1.5 TB"
    assert human_bytes(None) == "-" and human_bytes(math.nan) == "-"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("4GB", 4e9), ("512MB", 512e6), ("1.5 GB", 1.5e9), ("4gb", 4e9), ("100 KB", 1e5),
     ("2 GiB", 2 * 2**30), ("100000", 1e5), ("7 B", 7.0), (4e9, 4e9), (512, 512.0)],
)  # fmt: skip
def test_a_size_is_read_as_bytes_or_a_number_with_a_unit(text, expected):
    assert parse_bytes(text) == expected


@pytest.mark.parametrize("bad", ["4 XB", "", "GB", "-1GB", "1.2.3GB", 0, -5, math.inf])
def test_a_size_that_is_not_one_is_refused(bad):
    with pytest.raises(ValueError, match="size"):
        parse_bytes(bad)


def test_a_size_written_reads_back_to_itself_within_its_digits():
    for b in (999.0, 12_345.0, 6.789e7, 3.21e9):
        assert parse_bytes(human_bytes(b)) == pytest.approx(b, rel=5e-3)
