"""Unit tests of the Parser DWA's minimization over plain lists (stackmask.compile.dwa_minimize),
on the pure-Python path and the compiled one (``_native.minimize_edges``), and the two
compared on random automata."""

import random

import pytest

from stackmask.compile import dwa_minimize
from stackmask.compile.dwa_minimize import STOP, depth, successors

from conftest import require_native


@pytest.fixture(params=["python", "compiled"])
def minimize(request):
    """``dwa_minimize.minimize`` on one path."""
    compiled = None
    if request.param == "compiled":
        require_native()
        from stackmask import native
        compiled = native.module()

    def run(items, trans, default, complete):
        return dwa_minimize.minimize(items, trans, default, complete, compiled)
    return run


def _auto():
    # 0 -(s1, w5)-> 1, 0 -(s2, w5)-> 2; 1 and 2 alike: both -(s3, w7)-> 3; 3 stops with w9;
    # 4 (unreachable, complete) gives nothing on any stack
    trans = [{1: (1, 5), 2: (2, 5)}, {3: (3, 7)}, {3: (3, 7)}, {4: (-1, 9)}, {}]
    default = [None, None, None, None, None]
    complete = [True, True, True, True, True]
    items = ["i0", "i1", "i2", "i3", "i4"]
    return items, trans, default, complete


def test_equivalent_states_merge_and_dead_ones_vanish(minimize):
    items, trans, default, complete = _auto()
    new, items2, trans2, default2, complete2 = minimize(items, trans, default, complete)
    assert new[1] == new[2] and new[1] >= 0       # same edges into the same class
    assert new[4] == -1                            # gives nothing on any stack
    assert len(items2) == 3 and items2 == ["i0", "i1", "i3"]   # old order kept
    assert trans2[new[0]] == {1: (new[1], 5), 2: (new[1], 5)}
    assert trans2[new[3]] == {4: (-1, 9)}
    assert complete2 == [True, True, True]


def test_states_differing_in_a_weight_stay_apart(minimize):
    items, trans, default, complete = _auto()
    trans[2] = {3: (3, 8)}
    new, items2, *_ = minimize(items, trans, default, complete)
    assert new[1] != new[2] and len(items2) == 4


def test_an_incomplete_state_is_a_class_of_its_own(minimize):
    items, trans, default, complete = _auto()
    complete[2] = False
    new, items2, trans2, _, complete2 = minimize(items, trans, default, complete)
    assert new[1] != new[2]
    assert complete2[new[2]] is False and trans2[new[2]] == {3: (new[3], 7)}


def test_default_edges_count_in_the_signature(minimize):
    items, trans, default, complete = _auto()
    # state 2 reads s3 through its default edge: the same walk as state 1's explicit edge
    trans[2] = {}
    default[2] = (3, 7)
    new, *_ = minimize(items, trans, default, complete)
    assert new[1] != new[2]          # 1 stops on other symbols, 2 goes on: not the same
    default[1] = (3, 7)              # now both read every symbol alike
    new, *_ = minimize(items, trans, default, complete)
    assert new[1] == new[2]


def test_a_cycle_is_left_alone(minimize):
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


def test_classes_are_numbered_by_their_lowest_state(minimize):
    """States 2 and 9 merge: the class takes state 2's place and items, though a
    depth-first walk from state 0 can reach state 9 first (it does in Python's set
    order); state 5, a class of its own, comes after it."""
    trans = [{} for _ in range(10)]
    trans[0] = {1: (9, 5), 2: (2, 5)}
    trans[1] = {4: (-1, 9)}
    trans[2] = trans[9] = {3: (1, 7)}
    trans[5] = {6: (-1, 3)}
    items = [f"i{q}" for q in range(10)]
    new, items2, trans2, *_ = minimize(items, trans, [None] * 10, [True] * 10)
    assert new[2] == new[9] == 2 and new[5] == 3 and items2 == ["i0", "i1", "i2", "i5"]
    assert trans2[0] == {1: (2, 5), 2: (2, 5)}


def _random_automaton(rng: random.Random, n: int):
    """An acyclic automaton of ``n`` states (edges only to higher states, so ids are a
    topological order) with few weights and stack symbols, so that states merge."""
    trans, default, complete = [], [], []
    for q in range(n):
        t = {}
        for s in rng.sample(range(8), rng.randint(0, 5)):
            d = rng.choice([-1] + list(range(q + 1, n))) if q + 1 < n else -1
            t[s] = (d, rng.choice([0, 0, 1, 2]))
        trans.append(t)
        r = rng.random()
        if r < 0.3 and q + 1 < n:
            default.append((rng.randrange(q + 1, n), rng.choice([0, 1])))
        elif r < 0.4:
            default.append((-1, rng.choice([0, 2])))
        else:
            default.append(None)
        complete.append(rng.random() < 0.85)
    # shuffle the ids, so that the visiting order is not the id order
    perm = list(range(n))
    rng.shuffle(perm)
    inv = {old: new for new, old in enumerate(perm)}

    def mv(e):
        return e if e is None or e[0] < 0 else (inv[e[0]], e[1])
    trans = [{s: mv(e) for s, e in trans[perm[i]].items()} for i in range(n)]
    default = [mv(default[perm[i]]) for i in range(n)]
    complete = [complete[perm[i]] for i in range(n)]
    return [f"i{q}" for q in range(n)], trans, default, complete


def test_compiled_minimization_equals_the_python_one():
    require_native()
    from stackmask import native
    rng = random.Random(5)
    merged = 0
    for trial in range(400):
        auto = _random_automaton(rng, rng.randint(1, 40))
        ref = dwa_minimize.minimize(*auto)
        got = dwa_minimize.minimize(*auto, compiled=native.module())
        assert got == ref, trial
        items, trans, default, complete = auto
        mine = [dict(t) for t in trans]           # consumed: emptied on the way
        assert dwa_minimize.minimize(items, mine, default, complete, native.module(),
                                     consume=True) == ref
        assert mine == [None] * len(trans)
        pairs = [e for t in got[2] for e in t.values()] + [e for e in got[3] if e]
        assert len({id(e) for e in pairs}) == len(set(pairs))    # equal pairs: one tuple
        merged += len(auto[0]) - len(ref[1])
    assert merged > 400                       # the cases merge states
    cyclic = [{1: (1, 0)}, {2: (0, 1)}]
    assert native.module().minimize_edges(cyclic, [None, None], [True, True]) is None
