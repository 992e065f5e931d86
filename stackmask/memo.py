"""The dict type of stackmask's memos, kept where the garbage collector leaves it.

CPython stops tracking an exact ``dict`` whose keys and values are all untracked
(ints, bytes, tuples of them once a collection has seen them): most memos here
hold such data. Inserting one new tuple (tracked when created) tracks the dict
again, into the *youngest* generation, so the next young collection, which
should cost microseconds, traverses every entry of the memo: a 72,000-entry
lexer-step memo made one ``commit`` take 1.3 ms on Go (measured with
``gc.callbacks``). Instances of a dict subclass are never untracked: a memo
created as a :class:`Memo` ages into the oldest generation once and stays there,
and only full collections visit it. Lookups (``get``, ``in``) cost the same.
"""

from __future__ import annotations


class Memo(dict):
    """A ``dict`` for large memos (see the module docstring); no other behaviour."""

    __slots__ = ()
