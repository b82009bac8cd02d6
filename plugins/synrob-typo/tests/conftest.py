"""Fixtures for the synrob-typo tests: UD English EWT dev from ../shared (never copied)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
EWT_DIR = Path(os.environ.get("SYNROB_EWT_DIR", REPO.parent / "shared" / "data" / "ud" / "en_ewt"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: runs over all of EWT dev (still run in CI)")


@pytest.fixture(scope="session")
def ewt_dev_sentences() -> list:
    """Every sentence of UD English EWT dev (2,001 sentences)."""
    from synrob.perturb.corpus import read_conllu

    path = EWT_DIR / "en_ewt-ud-dev.conllu"
    if not path.is_file():
        pytest.fail(f"EWT dev not found at {path} (set SYNROB_EWT_DIR)")
    return list(read_conllu(path))
