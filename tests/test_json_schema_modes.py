"""Lexer modes for property values (``stackmask.grammars.json_schema.modes``): a key
switches to a mode holding what can follow it. The modes' shape, that they are made only
where they shrink the lexer, that the language is the one without them (random schemas
against ``jsonschema`` with modes forced wherever a key has values of its own), and masks
against the reference oracle with Qwen2.5's vocabulary."""

from __future__ import annotations

import json
import logging
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from stackmask import Constraint, Grammar, GrammarError
from stackmask.grammars.json_schema import convert_schema
from stackmask.grammars.json_schema import modes as M
from stackmask.lexer.combined import compile_lexer, compile_modal_lexer
from test_counted import _walk
from test_json_schema import accepts, check
from test_json_schema_property import BYTES, KEYS, _spellings, schemas, values

jsonschema = pytest.importorskip("jsonschema")

#: property values with string languages of their own (each a few hundred lexer states)
PATTERNS = {"id": "^[a-z]{2,12}-[0-9]{1,8}$", "when": None, "mail": None,
            "code": "^[A-Z]{3}[0-9]{3}$", "path": "^(/[a-z0-9_]{1,20}){1,6}$"}


def _schema():
    props = {"id": {"type": "string", "pattern": PATTERNS["id"], "maxLength": 18},
             "when": {"type": "string", "format": "date-time"},
             "mail": {"type": "string", "format": "email"},
             "code": {"type": "string", "pattern": PATTERNS["code"]},
             "path": {"type": "string", "pattern": PATTERNS["path"], "minLength": 3},
             "note": {"type": "string", "maxLength": 90},
             "n": {"type": "integer", "minimum": 3, "maximum": 700},
             "tags": {"type": "array", "items": {"type": "string", "maxLength": 8}},
             "sub": {"type": "object", "properties": {"code": {"type": "string"},
                                                      "k": {"enum": ["x", "y"]}}}}
    return {"type": "object", "properties": props, "required": ["id", "when"]}


def _modes(g: Grammar) -> dict:
    return {m.name: m for m in g.modes}


def test_keys_switch_to_what_can_follow_them():
    g = convert_schema(_schema()).grammar
    modes = _modes(g)
    assert "json" == g.modes[0].name and len(g.modes) > 2
    default = modes["json"]
    names = {t.name for t in g.terminals}
    assert set().union(*(m.terminals for m in g.modes)) == names
    regex = {t.name: t.regex for t in g.terminals}
    keys = {n for n in names if n.startswith("KEY")}
    ws = {n for n in names if n.startswith("WS")}
    assert keys <= set(default.terminals)
    switched = dict(default.switch)
    assert switched and set(switched) <= keys
    own = set()
    for name, m in modes.items():
        if name == "json":
            continue
        # every lexeme but the whitespace after the key ends the value mode; the mode is
        # optional: the compiler may read its terminals in the default mode instead
        assert dict(m.switch) == {n: "json" for n in m.terminals if n not in ws}
        assert m.merge_into == "json"
        assert not keys & set(m.terminals)
        own |= set(m.terminals) - set(default.terminals)
    # the patterned and formatted strings are read only after their keys
    def reads(text):
        return {n for n in names if re.fullmatch(regex[n], text)}
    code, mail, any_string = reads('"ABC123"'), reads('"a@b.co"'), reads('"' + "?" * 200 + '"')
    assert code & own and mail & own and any_string <= set(default.terminals)
    # "code" is a key of two objects, a small pattern in one, any string in the other:
    # one key terminal, its mode holds both (M.LARGE_CONTEXT: too small to split)
    declared = {t.name for t in g.terminals if t.priority == 1}
    code_keys = [k for k in keys & declared if re.fullmatch(regex[k], '"code":')]
    assert len(code_keys) == 1
    code_mode = set(modes[switched[code_keys[0]]].terminals)
    assert code & code_mode and any_string & code_mode


def test_modes_shrink_the_lexer():
    g = convert_schema(_schema()).grammar
    plain = convert_schema(_schema(), lexer_modes=False).grammar
    assert not plain.modes
    pos = {t.name: i for i, t in enumerate(g.terminals)}
    modal, starts = compile_modal_lexer(g.terminals, [[pos[n] for n in m.terminals]
                                                      for m in g.modes], 129)
    single = compile_lexer(plain.terminals, 129)
    assert len(starts) == len(g.modes)
    assert modal.n_states < single.n_states / 2


def test_no_modes_where_values_have_little_of_their_own():
    # one small number range of its own: the modes are not even offered
    s = {"type": "object", "properties": {"a": {"type": "string"},
                                          "b": {"type": "integer", "minimum": 0, "maximum": 9},
                                          "c": {"type": "array", "items": {"type": "string"}}}}
    assert not convert_schema(s).grammar.modes
    assert not convert_schema(_schema(), lexer_modes=False).grammar.modes


def test_the_compiler_keeps_optional_modes_only_where_smaller():
    from stackmask.compile.tables import build_tables, merge_optional_modes
    g = convert_schema(_schema()).grammar
    merged = merge_optional_modes(g)
    assert not merged.modes                  # one mode of every terminal: no modes at all
    t = build_tables(g, ambiguous=True, band=129)
    assert len(t.mode_starts) == len(g.modes) and t.grammar is g
    # the same schema without its one long string: the modes repeat more than they save
    s = _schema()
    del s["properties"]["note"]
    g2 = convert_schema(s).grammar
    assert g2.modes                          # offered (values of their own) ...
    t2 = build_tables(g2, ambiguous=True, band=129)
    assert t2.mode_starts == (0,)            # ... and merged
    plain = compile_lexer(convert_schema(s, lexer_modes=False).grammar.terminals, 129)
    # (and one state more: where a lexeme starts after a whitespace gap)
    assert t2.gap_starts == (plain.n_states,)
    assert t2.lexer.n_states == plain.n_states + 1


@pytest.mark.parametrize("wide, small", [(3, 2000), (100, 2000), (100, 0), (1, 10**6)])
def test_which_optional_modes_are_kept(monkeypatch, wide, small):
    # modes kept where merging would put WIDE_CHAIN strings or more on one counted chain;
    # otherwise the smaller automaton (the merged one up to MERGED_SMALL states unless it
    # has a counted chain, and on ties)
    from stackmask.compile import tables as T
    from stackmask.lexer.combined import widest_chain
    monkeypatch.setattr(T, "WIDE_CHAIN", wide)
    monkeypatch.setattr(T, "MERGED_SMALL", small)
    s2 = _schema()
    del s2["properties"]["note"]
    seen = set()
    for s in (_schema(), s2):
        g = convert_schema(s).grammar
        merged = T.merge_optional_modes(g)
        lexed = g.lexed_terminals
        sizes, chains = {}, {}
        for read in (g, merged):
            dfa = compile_modal_lexer(lexed, T._mode_lists(read, lexed), 129)[0]
            sizes[read], chains[read] = dfa.n_states, bool(dfa.chains)
        width = widest_chain(lexed, T._mode_lists(merged, lexed), 129)
        read, d, _ = T._lexer(g, lexed, 129)
        kept = read.modes == g.modes             # else merged (a grammar of its own)
        if width >= wide:
            assert kept
        elif sizes[merged] <= small and not (width and chains[merged]):
            assert not kept
        else:
            assert kept == (sizes[g] < sizes[merged])
        assert d.n_states == sizes[g if kept else merged]
        seen.add(width)
    assert max(seen) >= 3 > min(seen)            # the note's length joins a chain of 3


def test_a_small_merged_lexer_with_a_chain_beside_keys_keeps_the_smaller_modes():
    """Tool calling: a ``maxLength: 40`` string is a counted chain; merged into the keys'
    mode (under MERGED_SMALL states) every count is read beside every key's progress.
    The modes are tried then, and kept where smaller (they are for these three tools,
    ``benchmarks/tags_bench.py``'s: construction 1.3 -> 0.8 s)."""
    from stackmask.compile import tables as T
    from stackmask.grammars.tags import tool_calling
    tools = [{"name": "get_weather", "parameters": {
                 "type": "object", "additionalProperties": False, "required": ["city"],
                 "properties": {"city": {"type": "string", "maxLength": 40},
                                "unit": {"enum": ["celsius", "fahrenheit"]},
                                "days": {"type": "integer", "minimum": 1, "maximum": 14}}}},
             {"name": "search", "parameters": {
                 "type": "object", "additionalProperties": False, "required": ["query"],
                 "properties": {"query": {"type": "string"},
                                "limit": {"type": "integer", "minimum": 1},
                                "sites": {"type": "array", "items": {"type": "string"},
                                          "maxItems": 5}}}},
             {"name": "send_email", "parameters": {
                 "type": "object", "additionalProperties": False,
                 "required": ["to", "subject", "body"],
                 "properties": {"to": {"type": "string", "format": "email"},
                                "subject": {"type": "string"}, "body": {"type": "string"},
                                "urgent": {"type": "boolean"}}}}]
    g = tool_calling(tools)
    merged = T.merge_optional_modes(g)
    lexed = g.lexed_terminals
    one = compile_modal_lexer(lexed, T._mode_lists(merged, lexed), 129)[0]
    split = compile_modal_lexer(lexed, T._mode_lists(g, lexed), 129)[0]
    assert one.chains and one.n_states <= T.MERGED_SMALL
    assert split.n_states < one.n_states
    read, d, _ = T._lexer(g, lexed, 129)
    assert read is g and d.n_states == split.n_states


def test_with_a_chain_the_modes_are_built_first_and_bound_the_merged_lexer(monkeypatch):
    """Where the merged modes would read a chain beside other terminals both lexers may be
    built: the modes first, then the merged one with at most their states (given up past
    them), so a large merged lexer is not built whole only to lose."""
    from stackmask.compile import tables as T
    from stackmask.lexer.combined import widest_chain
    s = {"type": "object", "additionalProperties": False, "required": ["k"],
         "properties": {"k": {"type": "string", "maxLength": 300},
                        "n": {"type": "integer", "minimum": 0, "maximum": 99},
                        "e": {"enum": ["alpha", "beta"]}}}
    g = convert_schema(s).grammar
    lexed = g.lexed_terminals
    merged = T.merge_optional_modes(g)
    assert merged is not g and widest_chain(lexed, T._mode_lists(merged, lexed), 129)
    calls = []
    real = T.compile_modal_lexer

    def spy(terms, modes, band, max_states=None):
        calls.append((len(modes), max_states))
        return real(terms, modes, band, max_states) if max_states is not None else \
            real(terms, modes, band)
    monkeypatch.setattr(T, "compile_modal_lexer", spy)
    read, d, _ = T._lexer(g, lexed, 129)
    split = real(lexed, T._mode_lists(g, lexed), 129)[0]
    assert calls[0][0] == len(T._mode_lists(g, lexed))            # the modes first
    assert len(calls) == 2 and calls[1] == (len(T._mode_lists(merged, lexed)),
                                            max(split.n_states, T.MERGED_SMALL))
    assert d.n_states <= split.n_states


def test_modal_grammar_accepts_the_same_texts():
    s = _schema()
    valid = [{"id": "ab-1", "when": "2024-02-29T10:00:00Z"},
             {"id": "abc-99", "when": "2024-01-01T00:00:00+01:00", "mail": "a@b.co", "code": "ABC123",
              "path": "/a/b_1", "n": 700, "tags": ["x", "12345678"],
              "sub": {"code": "anything", "k": "y"}, "extra": {"id": 5, "code": [1]}}]
    invalid = [{"id": "ab-1"}, {"id": "AB-1", "when": "2024-01-01T00:00:00Z"},
               {"id": "ab-1", "when": "2023-02-29T00:00:00Z"},
               {"id": "ab-1", "when": "2024-01-01T00:00:00Z", "code": "abc123"},
               {"id": "ab-1", "when": "2024-01-01T00:00:00Z", "n": 2},
               {"id": "ab-1", "when": "2024-01-01T00:00:00Z", "tags": ["123456789"]},
               {"id": "ab-1", "when": "2024-01-01T00:00:00Z", "sub": {"k": "z"}}]
    assert convert_schema(s).grammar.modes
    check(s, [json.dumps(v) for v in valid] + [json.dumps(v, indent=2) for v in valid],
          [json.dumps(v) for v in invalid])


@pytest.fixture
def forced_modes(monkeypatch):
    """Modes wherever some key has value terminals of its own, paying or not (and a key
    terminal per context wherever the contexts differ)."""
    from stackmask.compile import tables
    monkeypatch.setattr(M, "MIN_OWN_STATES", 0)
    monkeypatch.setattr(M, "LARGE_CONTEXT", 0)
    monkeypatch.setattr(tables, "merge_optional_modes", lambda g: g)


#: objects whose properties have schemas of their own: where modes are made
object_schemas = st.builds(
    lambda ps, add: {"type": "object", "properties": ps, "additionalProperties": add},
    st.dictionaries(st.sampled_from(KEYS), schemas, min_size=1, max_size=3),
    st.one_of(st.booleans(), schemas))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(schema=st.one_of(schemas, object_schemas), instances=st.lists(values, min_size=1, max_size=6))
def test_forced_modes_agree_with_jsonschema(forced_modes, schema, instances):
    logging.getLogger("stackmask").setLevel(logging.ERROR)
    try:
        # uniqueItems over an infinite item domain is a policy (not enforced, a warning):
        # refused here, so the grammar must agree with the validator exactly
        g = convert_schema(schema, unique_items="error").grammar
    except GrammarError:
        return
    c = Constraint(g, BYTES, compile="lazy", cache_dir=False, progress=False)
    validator = jsonschema.Draft202012Validator(schema)
    for v in instances:
        valid = validator.is_valid(v)
        assert any(accepts(c, t) for t in _spellings(v)) == valid, (json.dumps(schema), v)


def test_forced_modes_are_made_on_objects_with_values_of_their_own(forced_modes):
    # the shapes the property test above draws make modal grammars
    rng = random.Random(5)
    made = 0
    for _ in range(60):
        k = rng.sample(["a", "b", "c"], 2)
        s = {"type": "object", "properties": {k[0]: {"pattern": "^a", "type": "string"},
                                              k[1]: {"enum": [rng.randint(0, 9), "x"]}},
             "additionalProperties": rng.choice([False, True, {"type": "integer"}])}
        if convert_schema(s).grammar.modes:
            made += 1
    assert made == 60


def test_tag_bodies_keep_their_modes(forced_modes):
    from stackmask.grammars.tags import tag_dispatch
    body = _schema()
    g = tag_dispatch({"<call>": (body, "</call>")})
    names = [m.name for m in g.modes]
    assert names[0] == "text" and "tag0" in names and len(names) > 3
    c = Constraint(g, BYTES, compile="lazy", cache_dir=False, progress=False)
    assert len(c.tables.mode_starts) == len(g.modes)
    ok = json.dumps({"id": "ab-1", "when": "2024-02-29T10:00:00Z", "code": "XYZ000"})
    assert accepts(c, "hi <call>" + ok + "</call> bye")
    assert accepts(c, "<call>\n" + ok + "\n</call>")
    assert not accepts(c, "<call>" + ok.replace("XYZ000", "xyz000") + "</call>")
    # the body's whitespace is its own: one gap before and after it, not two
    assert accepts(c, "<call>" + ok + " </call>") and accepts(c, "<call>\t" + ok + "\n  </call>")
    assert not accepts(c, "<call>" + ok + " \n</call>") and not accepts(c, "<call>\n\n" + ok + "</call>")


def test_modal_schema_masks_equal_the_oracle(qwen_vocab, tmp_path):
    s = _schema()
    g = Grammar.from_json_schema(s)
    assert g.modes
    rng = random.Random(17)
    texts = [json.dumps({"id": "abcdefgh-1234567", "when": "2024-02-29T10:00:00.5Z",
                         "mail": "some.one@example.org", "code": "QRS987",
                         "path": "/usr/local_bin/x", "n": 42, "tags": ["a", "bb", ""],
                         "sub": {"code": "free text, with spaces", "k": "x"},
                         "other": {"when": ["2020-01-01"], "id": None}}),
             json.dumps({"id": "zz-0", "when": "2000-12-31T23:59:59-08:00", "extra": "é"},
                        indent=2, ensure_ascii=False)]
    validator = jsonschema.Draft202012Validator(s, format_checker=jsonschema.FormatChecker())
    assert all(validator.is_valid(json.loads(t)) for t in texts)
    for attempt in range(2):
        c = Constraint(g, qwen_vocab, cache_dir=tmp_path, progress=False)
        assert c.loaded_from_cache == bool(attempt)
        assert not c.compiled.dwa.budget_exhausted
        assert _walk(c, texts, rng, 3 if attempt == 0 else 7) >= 30


def test_a_value_terminal_over_the_limit_at_the_least_band_keeps_the_modes():
    # the length (163) is counted with stalls at the least band (64) beside the pattern's
    # own count (128): too large there, not at a vocabulary's band (no stall). The modes'
    # size estimate reads it as large instead of failing the conversion (CloudFormation's
    # SSM Association Target.Key)
    s = {"type": "object", "properties": {
        "Key": {"type": "string", "pattern": "^[\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]{1,128}$|resource-groups:Name",
                "minLength": 1, "maxLength": 163},
        "Values": {"type": "array", "items": {"type": "string", "maxLength": 256}}}}
    sg = convert_schema(s, strict=True)
    assert any("raw only" in w for w in sg.warnings)
    assert len(sg.grammar.modes) > 1


def _tag_schemas():
    """``Key`` in two objects with length-bounded patterns of their own (CloudFormation's
    tag and tag-condition keys), and once with any string."""
    tag = {"type": "object", "additionalProperties": False, "required": ["Key"],
           "properties": {"Key": {"type": "string", "pattern": "^[a-z0-9_.:/=+@-]+$", "maxLength": 40},
                          "Value": {"type": "string", "maxLength": 30}}}
    cond = {"type": "object", "additionalProperties": False,
            "properties": {"Key": {"type": "string", "pattern": "^[A-Z0-9*?]+$", "maxLength": 60},
                           "Op": {"enum": ["eq", "ne"]}}}
    scopes = {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+:[a-z]+$", "maxLength": 30}}
    return {"type": "object", "properties": {"Tags": {"type": "array", "items": tag},
                                             "Conditions": {"type": "array", "items": cond},
                                             "Scopes": scopes,
                                             "Other": {"type": "object", "properties": {"Key": {"type": "string"}}}}}


def test_one_key_name_in_several_contexts_gets_a_mode_each(monkeypatch):
    monkeypatch.setattr(M, "LARGE_CONTEXT", 40)     # these patterns are small
    s = _tag_schemas()
    g = convert_schema(s).grammar
    regex = {t.name: t.regex for t in g.terminals}
    keys = sorted(t.name for t in g.terminals if t.priority == 1 and re.fullmatch(t.regex, '"Key":'))
    assert len(keys) == 3
    switched, modes = dict(g.modes[0].switch), _modes(g)
    targets = [switched.get(k) for k in keys]
    assert targets.count(None) == 1 and len({t for t in targets if t}) == 2
    lower, upper = '"ab_c.d"', '"AB*?"'
    for t in targets:
        if t:                       # each mode reads one of the two patterns, not both
            m = modes[t].terminals
            assert sum(any(re.fullmatch(regex[n], x) and n not in g.modes[0].terminals for n in m)
                       for x in (lower, upper)) == 1
    # the language: each pattern only where its object is
    ok = {"Tags": [{"Key": "ab_c.d", "Value": "v"}], "Conditions": [{"Key": "AB*?", "Op": "eq"}],
          "Other": {"Key": "Anything at all"}}
    bad = [{"Tags": [{"Key": "AB*?"}]}, {"Conditions": [{"Key": "ab_c.d"}]},
           {"Tags": [{"Key": "a" * 41}]}, {"Conditions": [{"Key": "A" * 61}]},
           {"Tags": [{"Value": "v"}]}]
    check(s, [json.dumps(ok), json.dumps(ok, indent=2), json.dumps({"Other": {"Key": "AB*?"}})],
          [json.dumps(b) for b in bad])
    # without a key terminal per context one mode reads both patterns: a product
    with pytest.MonkeyPatch.context() as mp:
        from stackmask.grammars.json_schema import emit
        mp.setattr(emit, "split_keys", lambda t, r, s_, k: (t, r, k))
        shared = convert_schema(s).grammar
    sizes = []
    for gr in (g, shared):
        pos = {t.name: i for i, t in enumerate(gr.terminals)}
        modal, _ = compile_modal_lexer(gr.terminals, [[pos[n] for n in m.terminals] for m in gr.modes], 129)
        sizes.append(modal.n_states)
    assert sizes[0] < sizes[1]


def test_an_array_of_scalars_is_read_in_its_keys_mode_to_its_end(forced_modes, monkeypatch):
    # "Scopes": an array of patterned strings, read in its mode from "[" to "]" (its items
    # never in the default mode); as an extra key of the open object "Other" any value.
    # The modes are kept (forced_modes): the language is the modal grammar's
    monkeypatch.setattr(M, "LARGE_CONTEXT", 40)
    s = _tag_schemas()
    g = convert_schema(s).grammar
    regex = {t.name: t.regex for t in g.terminals}
    item = {t.name for t in g.terminals if t.source.split(" (")[0].endswith("/Scopes/items")}
    default = g.modes[0]
    assert item and not item & set(default.terminals)
    span = [m for m in g.modes[1:] if item & set(m.terminals)]
    assert len(span) == 1
    ends = {n for n, _ in span[0].switch}
    assert ends and all(re.fullmatch(regex[n], "]") for n in ends)
    assert any(re.fullmatch(regex[n], ",") for n in span[0].terminals)
    ok = [{"Scopes": ["ab:cd", "x:y"]}, {"Scopes": []}, {"Scopes": ["a:b"], "Other": {"Scopes": "Any"}},
          {"Other": {"Scopes": ["AB", 1, {"k": []}]}}]
    bad = [{"Scopes": ["AB"]}, {"Scopes": [["a:b"]]}, {"Scopes": "a:b"}, {"Scopes": ["a:b", 1]},
           {"Scopes": ["a:" + "b" * 29]}, {"Scopes": ["a:b"], "Tags": [{"Key": "a:b", "Value": ["x"]}]}]
    check(s, [json.dumps(v) for v in ok] + [json.dumps(v, indent=2) for v in ok]
          + ['{"Scopes":[ "a:b" ,"c:d" ]}', '{"Scopes": [\n]}'], [json.dumps(v) for v in bad])
    # without the modes: the same answers
    check(s, [json.dumps(v) for v in ok], [json.dumps(v) for v in bad], lexer_modes=False)
    # an array value after extra keys (a key set: any declared name), some of which are
    # read in modes of their own elsewhere
    ys = {"type": "array", "items": {"type": "string", "pattern": "^y+$"}}
    ext = {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string", "pattern": "^x+$"}},
                                            "b": {"type": "integer"}, "o": {"type": "object", "additionalProperties": ys}},
           "additionalProperties": False}
    check(ext, ['{"a": ["x"], "b": 1, "o": {"b": ["yy"], "a": ["y"], "c": []}}', '{"o": {"o": ["y"]}}'],
          ['{"o": {"b": ["x"]}}', '{"a": ["y"]}', '{"o": {"a": 1}}', '{"b": ["y"]}'])
    # what follows such a value is read in the default mode (here only after it)
    one = {"type": "object", "properties": {"s": s["properties"]["Scopes"], "t": {"type": "integer"}},
           "required": ["s", "t"], "additionalProperties": False}
    assert convert_schema(one).grammar.modes
    check(one, ['{"s": ["a:b"], "t": 1}', '{"s": [] ,"t":2}', '{\n  "s": [\n    "a:b"\n  ],\n  "t": 3\n}'],
          ['{"s": ["a:b"]], "t": 1}', '{"s": ["a:b"],}', '{"s": ["a:b"]}', '{}'])


def test_key_copies_masks_equal_the_oracle(qwen_vocab, monkeypatch):
    monkeypatch.setattr(M, "LARGE_CONTEXT", 40)
    s = _tag_schemas()
    g = Grammar.from_json_schema(s)
    rng = random.Random(3)
    texts = [json.dumps({"Tags": [{"Key": "ab_c.d/x", "Value": "v v"}, {"Key": "k"}],
                         "Conditions": [{"Key": "AB*?", "Op": "ne"}], "Scopes": ["read:all", "x:y"],
                         "Other": {"Key": "Free, text", "Scopes": [1, "AB"]}}),
             json.dumps({"Conditions": [{"Key": "Z"}], "Other": {"Key": "x", "Op": 1}}, indent=2)]
    c = Constraint(g, qwen_vocab, cache_dir=False, progress=False)
    assert not c.compiled.dwa.budget_exhausted
    assert _walk(c, texts, rng, 3) >= 20
