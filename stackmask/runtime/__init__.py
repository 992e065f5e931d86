"""Runtime: Constraint, State, commit and masks."""

from .constraint import Constraint
from .state import State, ids_to_mask, mask_to_ids

__all__ = ["Constraint", "State", "ids_to_mask", "mask_to_ids"]
