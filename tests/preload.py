"""Loaded before pytest's own plugins (`-p tests.preload` in pyproject's addopts), so before
pytest-qt imports Qt: what the window's start does before Qt, the tests do too (see
`timothy.providers.sdk.settle_pydantic`); otherwise an app test whose chat engine first
imports the openai SDK on a worker could fail at random."""

from timothy.providers.sdk import settle_pydantic

settle_pydantic()
