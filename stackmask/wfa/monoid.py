"""The polycyclic monoid of stack effects over LR state ids.

Generators are ``push(s)`` and ``pop(s)`` for every state id ``s`` with the relations

    push(s) · pop(s) = 1          push(s) · pop(t) = 0   (s != t)

Products are read left to right in *time order*: ``a * b`` is "first do ``a``, then ``b``".
Every non-zero element has the unique normal form

    pop(a1) · … · pop(ak) · push(b1) · … · push(bm)

i.e. first pop ``k`` states (``a1`` is the current top of the stack, ``a2`` the one below, …),
then push ``m`` states (``bm`` ends up on top).  :class:`StackEffect` stores exactly that:
``pops = (a1, …, ak)`` and ``pushes = (b1, …, bm)``.  Composition cancels immediately: the
pushes of the left factor meet the pops of the right factor innermost first, and any mismatch
gives :data:`ZERO` (which absorbs everything).

Concrete stacks are given **top first** (``stack[0]`` is the top), the order in which the
runtime reads the GSS.
"""

from __future__ import annotations

from typing import Sequence, Union

__all__ = ["StackEffect", "ZERO", "IDENTITY", "push", "pop", "compose", "apply", "Effect"]


class _ZeroType:
    """The zero of the monoid: a product containing a mismatched push/pop pair."""

    __slots__ = ()
    _instance: "_ZeroType | None" = None

    def __new__(cls) -> "_ZeroType":
        if cls._instance is None:
            cls._instance = object.__new__(cls)
        return cls._instance

    is_zero = True

    def __mul__(self, other: "Effect") -> "_ZeroType":
        if not isinstance(other, (StackEffect, _ZeroType)):
            return NotImplemented
        return self

    def __repr__(self) -> str:
        return "ZERO"

    def __reduce__(self):
        return (_ZeroType, ())

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


ZERO = _ZeroType()


class StackEffect:
    """A non-zero element ``pop(*pops) · push(*pushes)`` of the polycyclic monoid (immutable)."""

    __slots__ = ("pops", "pushes", "_hash")
    is_zero = False

    pops: tuple[int, ...]
    pushes: tuple[int, ...]

    def __init__(self, pops: Sequence[int] = (), pushes: Sequence[int] = ()) -> None:
        object.__setattr__(self, "pops", tuple(int(s) for s in pops))
        object.__setattr__(self, "pushes", tuple(int(s) for s in pushes))
        object.__setattr__(self, "_hash", hash((self.pops, self.pushes)))

    def __setattr__(self, name, value):
        raise AttributeError("StackEffect is immutable")

    def __delattr__(self, name):
        raise AttributeError("StackEffect is immutable")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StackEffect):
            return NotImplemented
        return self.pops == other.pops and self.pushes == other.pushes

    def __hash__(self) -> int:
        return self._hash

    def __mul__(self, other: "Effect") -> "Effect":
        if not isinstance(other, (StackEffect, _ZeroType)):
            return NotImplemented
        return compose(self, other)

    def __reduce__(self):
        return (StackEffect, (self.pops, self.pushes))

    def __repr__(self) -> str:
        if not self.pops and not self.pushes:
            return "IDENTITY"
        parts = [f"pop({s})" for s in self.pops] + [f"push({s})" for s in self.pushes]
        return "·".join(parts)

    @property
    def depth(self) -> int:
        """How many stack entries the effect reads (pops) before it pushes."""
        return len(self.pops)

    @property
    def net(self) -> int:
        """Change in stack height."""
        return len(self.pushes) - len(self.pops)


Effect = Union[StackEffect, _ZeroType]

IDENTITY = StackEffect((), ())


def push(s: int) -> StackEffect:
    return StackEffect((), (s,))


def pop(s: int) -> StackEffect:
    return StackEffect((s,), ())


def compose(a: Effect, b: Effect) -> Effect:
    """``a · b``: first ``a``, then ``b``.  Cancels ``a``'s pushes against ``b``'s pops."""
    if a is ZERO or b is ZERO:
        return ZERO
    q1 = a.pushes
    p2 = b.pops
    i = len(q1)          # q1[:i] still uncancelled (the top of a's pushes is q1[i-1])
    j = 0                # p2[j:] still uncancelled
    n2 = len(p2)
    while i > 0 and j < n2:
        if q1[i - 1] != p2[j]:
            return ZERO
        i -= 1
        j += 1
    if j == n2:          # all of b's pops cancelled (or none): a's pops, then leftover pushes
        if i == len(q1) and not b.pushes:
            return a
        return StackEffect(a.pops, q1[:i] + b.pushes)
    # a's pushes are used up; b still pops p2[j:] from below a's pops
    if not a.pops and j == 0:
        return b
    return StackEffect(a.pops + p2[j:], b.pushes)


def apply(effect: Effect, stack_top_first: Sequence[int]) -> tuple[int, ...] | None:
    """Apply ``effect`` to a concrete stack given top first.

    Returns the new stack (top first) or ``None`` when the effect is ZERO, the stack is too
    short, or a popped entry differs from the state the effect requires.
    """
    if effect is ZERO:
        return None
    pops = effect.pops
    k = len(pops)
    if len(stack_top_first) < k:
        return None
    if tuple(stack_top_first[:k]) != pops:
        return None
    rest = tuple(stack_top_first[k:])
    return tuple(reversed(effect.pushes)) + rest
