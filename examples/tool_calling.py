"""Tool calling with Qwen2.5's <tool_call> special tokens, offline.

Free text may run until the model opens a tool call; between <tool_call> and
</tool_call> the output must be {"name": <one of the tools>, "arguments":
<that tool's parameters>}; then free text resumes. A scripted "model output"
stands in for the model: every token is checked against its mask and
committed, and a malformed call is shown being rejected.

    python examples/tool_calling.py

The first run compiles the mask automaton (about a second on a small
machine) and caches it; later runs load it.
"""

import time

import stackmask
from stackmask.grammars.tags import needs_glr, tool_calling
from stackmask.vocab import qwen2_5_encoding

tools = [
    {"type": "function", "function": {
        "name": "get_weather",
        "parameters": {"type": "object",
                       "properties": {"city": {"type": "string"},
                                      "unit": {"enum": ["celsius", "fahrenheit"]}},
                       "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "add",
        "parameters": {"type": "object",
                       "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                       "required": ["a", "b"]}}},
]

vocab = stackmask.Vocab.qwen2_5()              # <tool_call> is special token 151657 here
grammar = tool_calling(tools)                  # tags default to "<tool_call>" / "</tool_call>"
t0 = time.perf_counter()
c = stackmask.Constraint(grammar, vocab, ambiguous=needs_glr(grammar))
print(f"constraint ready in {time.perf_counter() - t0:.1f} s (loaded from cache: {c.loaded_from_cache})")

enc = qwen2_5_encoding()
output = ('Let me check the weather.<tool_call>\n{"name": "get_weather", "arguments": '
          '{"city": "Paris", "unit": "celsius"}}\n</tool_call>')
tokens = enc.encode(output, allowed_special="all")
assert 151657 in tokens                        # the single special token, not "<", "tool", ...

state = c.start()
for t in tokens:
    mask = c.get_mask(state)                   # int32 words: bit t % 32 of word t // 32
    assert (mask[t // 32] >> (t % 32)) & 1, enc.decode([t])
    state = c.commit(state, t)
eos = 151645                                   # <|im_end|>
print("complete:", c.is_accepting(state), "| EOS allowed:", bool((c.get_mask(state)[eos // 32] >> (eos % 32)) & 1))

# a call of an unknown tool is refused at the first token that cannot continue
state = c.start()
bad = enc.encode('<tool_call>{"name": "delete_everything"', allowed_special="all")
try:
    for t in bad:
        state = c.commit(state, t)
except stackmask.TokenRejected as e:
    print(f"rejected {enc.decode([e.token_id])!r}: {e}")
