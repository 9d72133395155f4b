"""embdebias._gc.fewer_collections: the young threshold raised inside, restored after, shared by
nested and concurrent blocks; cycles still collected."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest

from embdebias._gc import YOUNG_THRESHOLD, fewer_collections


@pytest.fixture
def thresholds():
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_raised_inside_and_restored_after(thresholds):
    with fewer_collections():
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
        with fewer_collections():
            assert gc.get_threshold()[0] == YOUNG_THRESHOLD
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD   # the inner block does not restore early
    assert gc.get_threshold() == (700, 10, 10)


def test_restored_after_an_exception(thresholds):
    with pytest.raises(ZeroDivisionError), fewer_collections():
        1 / 0
    assert gc.get_threshold() == (700, 10, 10)


def test_a_higher_threshold_or_a_disabled_collector_is_kept(thresholds):
    gc.set_threshold(10 * YOUNG_THRESHOLD, 5, 5)
    with fewer_collections():
        assert gc.get_threshold() == (10 * YOUNG_THRESHOLD, 5, 5)
    gc.set_threshold(0, 10, 10)
    with fewer_collections():
        assert gc.get_threshold()[0] == 0
    assert gc.get_threshold() == (0, 10, 10)


def test_concurrent_blocks_restore_once_the_last_leaves(thresholds):
    inside, leave = threading.Barrier(3), threading.Event()

    def block():
        with fewer_collections():
            inside.wait()
            leave.wait()

    threads = [threading.Thread(target=block) for _ in range(2)]
    for t in threads:
        t.start()
    inside.wait()
    assert gc.get_threshold()[0] == YOUNG_THRESHOLD
    leave.set()
    for t in threads:
        t.join()
    assert gc.get_threshold() == (700, 10, 10)


def test_cycles_are_still_collected(thresholds):
    class Node:
        pass

    with fewer_collections():
        a, b = Node(), Node()
        a.other, b.other = b, a
        gone = weakref.ref(a)
        del a, b
        gc.collect()
        assert gone() is None
