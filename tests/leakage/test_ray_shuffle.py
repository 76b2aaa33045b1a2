"""The Ray LSH join picks Ray Data's sort shuffle for itself only, and never over the user's choice."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

ray = pytest.importorskip("ray")

from ray.data.context import DataContext, ShuffleStrategy  # noqa: E402

from casework.leakage.ray_lsh import SHUFFLE_ENV, _sort_shuffle  # noqa: E402

# Ray's own modules warn about their own deprecated settings (its context warns as it is made);
# those are not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray")


@pytest.fixture
def hash_shuffle() -> Iterator[DataContext]:
    """The current Ray Data context set to the hash shuffle, put back as it was after the test."""
    context = DataContext.get_current()
    before = context.shuffle_strategy
    context.shuffle_strategy = ShuffleStrategy.HASH_SHUFFLE
    yield context
    context.shuffle_strategy = before


def strategy(context: DataContext) -> ShuffleStrategy:
    return context.shuffle_strategy


def test_the_join_uses_the_sort_shuffle_and_puts_the_previous_one_back(
    monkeypatch: pytest.MonkeyPatch, hash_shuffle: DataContext
) -> None:
    monkeypatch.delenv(SHUFFLE_ENV, raising=False)
    with _sort_shuffle(ray):
        assert strategy(hash_shuffle) == ShuffleStrategy.SORT_SHUFFLE_PULL_BASED
    assert strategy(hash_shuffle) == ShuffleStrategy.HASH_SHUFFLE
    with pytest.raises(RuntimeError), _sort_shuffle(ray):
        raise RuntimeError("a failed join")
    assert strategy(hash_shuffle) == ShuffleStrategy.HASH_SHUFFLE


def test_a_shuffle_chosen_in_the_environment_holds(
    monkeypatch: pytest.MonkeyPatch, hash_shuffle: DataContext
) -> None:
    monkeypatch.setenv(SHUFFLE_ENV, "hash_shuffle")
    with _sort_shuffle(ray):
        assert strategy(hash_shuffle) == ShuffleStrategy.HASH_SHUFFLE
