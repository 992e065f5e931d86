"""Unit tests of the Parser DWA's minimization over plain lists (stackmask.compile.dwa_minimize)."""

from stackmask.compile.dwa_minimize import STOP, depth, minimize, successors


def _auto():
    # 0 -(s1, w5)-> 1, 0 -(s2, w5)-> 2; 1 and 2 alike: both -(s3, w7)-> 3; 3 stops with w9;
    # 4 (unreachable, complete) gives nothing on any stack
    trans = [{1: (1, 5), 2: (2, 5)}, {3: (3, 7)}, {3: (3, 7)}, {4: (-1, 9)}, {}]
    default = [None, None, None, None, None]
    complete = [True, True, True, True, True]
    items = ["i0", "i1", "i2", "i3", "i4"]
    return items, trans, default, complete


def test_equivalent_states_merge_and_dead_ones_vanish():
    items, trans, default, complete = _auto()
    new, items2, trans2, default2, complete2 = minimize(items, trans, default, complete)
    assert new[1] == new[2] and new[1] >= 0       # same edges into the same class
    assert new[4] == -1                            # gives nothing on any stack
    assert len(items2) == 3 and items2 == ["i0", "i1", "i3"]   # old order kept
    assert trans2[new[0]] == {1: (new[1], 5), 2: (new[1], 5)}
    assert trans2[new[3]] == {4: (-1, 9)}
    assert complete2 == [True, True, True]


def test_states_differing_in_a_weight_stay_apart():
    items, trans, default, complete = _auto()
    trans[2] = {3: (3, 8)}
    new, items2, *_ = minimize(items, trans, default, complete)
    assert new[1] != new[2] and len(items2) == 4


def test_an_incomplete_state_is_a_class_of_its_own():
    items, trans, default, complete = _auto()
    complete[2] = False
    new, items2, trans2, _, complete2 = minimize(items, trans, default, complete)
    assert new[1] != new[2]
    assert complete2[new[2]] is False and trans2[new[2]] == {3: (new[3], 7)}


def test_default_edges_count_in_the_signature():
    items, trans, default, complete = _auto()
    # state 2 reads s3 through its default edge: the same walk as state 1's explicit edge
    trans[2] = {}
    default[2] = (3, 7)
    new, *_ = minimize(items, trans, default, complete)
    assert new[1] != new[2]          # 1 stops on other symbols, 2 goes on: not the same
    default[1] = (3, 7)              # now both read every symbol alike
    new, *_ = minimize(items, trans, default, complete)
    assert new[1] == new[2]


def test_a_cycle_is_left_alone():
    trans = [{1: (1, 5)}, {1: (0, 5)}]
    assert minimize(["a", "b"], trans, [None, None], [True, True]) is None
    assert STOP == (-1, 0)


class _D:
    def __init__(self, trans, default, init, pair_init=None):
        self.trans, self.default, self.init = trans, default, init
        self.pair_init = pair_init or {}

    def state_edges(self, q):
        return self.trans[q]


def test_depth_and_successors():
    items, trans, default, complete = _auto()
    d = _D(trans, default, {7: (0, 0)})
    assert successors(d, 0) == {1, 2}
    assert successors(d, 3) == set()             # a stop (-1) is not a state
    assert depth(d) == (3, True)                 # 0 -> 1 -> 3 reads three entries
    d2 = _D([{1: (1, 5)}, {1: (0, 5)}], [None, None], {7: (0, 0)})
    assert depth(d2) == (None, False)
