"""The numbers guard: which texts state the same figures, and which do not."""

from __future__ import annotations

import pytest

from timothy.memory.figures import describe, figures, figures_differ


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("My budget is 500", "My budget is 800"),
        ("My budget is $500", "My budget is €500"),
        ("My budget is 500", "I have a budget"),
        ("The meeting is on March 3", "The meeting is on March 5"),
        ("The meeting is on Monday", "The meeting is on Tuesday"),
        ("I moved in March", "I moved in May"),
        ("The party is tomorrow", "The party is today"),
        ("Rent is 1,500", "Rent is 1,800"),
        ("It was -5 degrees", "It was 5 degrees"),
        ("I take Python 3.10", "I take Python 3.1"),
        ("I run twice a week", "I run once a week"),
        ("I have two cats", "I have three cats"),
        ("Gate 12", "Gate 21"),
        ("The code is ٥٠٠", "The code is 600"),
        ("It costs 5%", "It costs 5"),
        ("Born on 2 Jan 1990", "Born on 2 Feb 1990"),
    ],
)
def test_different_figures_are_told_apart(left: str, right: str) -> None:
    assert figures(left) != figures(right)
    assert figures_differ([left, right]) is not None


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("My budget is 500", "Budget: 500"),
        ("Rent is 1,500 a month", "Rent: 1500 monthly"),
        ("I have two cats", "I have 2 cats"),
        ("It is my 3rd visit", "It is my third visit"),
        ("Met on 2024-03-05", "We met 2024-3-5"),
        ("Wake at 07:30", "Wake up at 7:30"),
        ("Costs $20", "It costs 20 dollars"),
        ("A 5 per cent raise", "a 5% raise"),
        ("I may move to Rome", "I might move to Rome"),
        ("Jan loves cheese", "Jan really loves cheese"),
        ("The code is ٥٠٠", "The code is 500"),
        ("I like tea", "I love tea"),
    ],
)
def test_the_same_figures_written_differently_agree(left: str, right: str) -> None:
    assert figures(left) == figures(right)
    assert figures_differ([left, right]) is None


def test_figures_count_repeats_and_describe_them() -> None:
    assert figures("2 cats and 2 dogs") != figures("2 cats and dogs")
    assert describe(figures("$500 on May 3")) == "$, 3, 500, may"
    assert describe(figures("nothing here")) == "none"


def test_figures_differ_lists_each_texts_figures_in_order() -> None:
    found = figures_differ(["budget 500", "budget 500", "budget 800"])
    assert found is not None
    assert [describe(item) for item in found] == ["500", "500", "800"]
