"""Integrations with decoding stacks (optional dependencies, imported lazily).

* :mod:`stackmask.integrations.torch` -- :func:`apply_token_bitmask_inplace`,
  the packed int32 bitmask (the layout ``Constraint.get_mask`` returns and
  vLLM/SGLang/xgrammar consume) applied to a logits tensor on any device.
* :mod:`stackmask.integrations.transformers` --
  :class:`StackmaskLogitsProcessor`, a ``transformers`` ``LogitsProcessor``
  keeping one parse state per batch row.

Neither module is imported by ``import stackmask``; they need ``torch``
(and ``transformers``) installed.
"""
