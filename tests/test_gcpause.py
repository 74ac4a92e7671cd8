"""The collector paused while a compile is analysed (models/gcpause.py): restored after, what the
pause built frozen rather than rescanned as young, and no cycle lost: the next pause hands the
frozen objects back to the oldest generation, where a full collection frees a dead cycle."""

from __future__ import annotations

import gc
import weakref

from bankproof.models.gcpause import paused_gc


class _Node:
    pass


def test_a_cycle_made_in_a_pause_is_collected_after_the_next_pause_begins():
    with paused_gc():
        a, b = _Node(), _Node()
        a.other, b.other = b, a
        probe = weakref.ref(a)
        del a, b
    assert gc.isenabled() and gc.get_freeze_count() > 0
    gc.collect()
    assert probe() is not None  # frozen: a full collection does not see it yet
    with paused_gc():
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    gc.unfreeze()
    gc.collect()
    assert probe() is None


def test_nested_pauses_restore_the_collector_once():
    with paused_gc():
        with paused_gc():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()  # a collector that was off stays off
    finally:
        gc.enable()
