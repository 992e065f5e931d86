"""Tag dispatch: free text with tagged, grammar-constrained sections.

The structure of tool-calling and reasoning formats::

    free text <tool_call>{"name": "get_weather", "arguments": {...}}</tool_call> more text ...

:func:`tag_dispatch` builds a :class:`~stackmask.Grammar` in which free text
runs until one of the opening tags appears; what follows is constrained by
that tag's body grammar (a JSON Schema, Lark text or a ``Grammar``) up to its
closing tag; then free text resumes. ``stop`` strings or special tokens end
the text early (after one, only EOS is allowed); without one the text may end
(EOS) wherever free text may.

Semantics (exact; masks are tested against the reference oracle):

* **Tags as special tokens or text.** Each tag is accepted as the special
  token with that text when the vocabulary has one (Qwen's ``<tool_call>``,
  id 151657 in :meth:`stackmask.Vocab.qwen2_5`) and also spelled out as text
  (any tokens whose bytes spell it). A vocabulary where the tag is ordinary
  text gets the text form only. Tags and stop strings may also be token ids
  of special tokens (``stop=[151643]``).
* **Free text** is any valid UTF-8 text in which no opening tag and no stop
  string occurs; the first occurrence of one ends it (``abc<tool_call>``
  opens a call, ``abc<tool_cal`` stays text). Free text may be empty.
* **Bodies** are lexed in their own lexer mode (only the body's terminals,
  the closing tag and ``whitespace`` compete there), so a catch-all free-text
  terminal never swallows JSON. ``whitespace`` (a regex, default one line
  break ``\\r?\\n``; ``None``: none) is allowed right after the opening and
  before the closing tag, as in Qwen's ``<tool_call>\\n{...}\\n</tool_call>``,
  except around a body whose grammar has whitespace gaps (``Grammar.gaps``: a JSON
  Schema body under the default bounded whitespace), which brings its own: one gap
  (a line break, then at most ``max_whitespace`` spaces/tabs) before and after it.
* A JSON Schema body uses :func:`stackmask.grammars.json_schema.schema_to_grammar`
  (``schema_options`` are passed on). Bodies may not use lexer modes of their
  own.
* The result can have LALR(1) conflicts when a body does (e.g. overlapping
  ``anyOf`` branches); check with :func:`needs_glr` and build the
  ``Constraint`` with ``ambiguous=True`` then. The skeleton added here is
  LALR(1).

:func:`tool_calling` is the common case: one tag pair whose body is
``{"name": <tool name>, "arguments": <its parameters schema>}`` for a list of
tools (OpenAI-style function definitions accepted).
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping

from ..errors import GrammarError
from ..grammar import FreeText, Grammar, LexerMode, Rule, TerminalDef

__all__ = ["tag_dispatch", "tool_calling", "tool_call_schema", "needs_glr"]

DEFAULT_WHITESPACE = r"\r?\n"


def _body_grammar(body, schema_options: Mapping) -> Grammar:
    if isinstance(body, Grammar):
        return body
    if isinstance(body, (dict, bool)):
        from .json_schema import schema_to_grammar
        return schema_to_grammar(body, **dict(schema_options))
    if isinstance(body, str):
        return Grammar.from_lark(body)
    raise TypeError(f"a tag body is a JSON Schema (dict), Lark text or a stackmask.Grammar, "
                    f"not {type(body).__name__}")


def _prefixed(g: Grammar, tp: str, rp: str, used: set) -> tuple:
    """Rename every symbol of ``g`` (terminals ``tp``+name, rules ``rp``+name); its lexer
    modes become ``(name, terminals, switch, merge_into)`` over the new names, modes named
    ``rp``+name."""
    tmap = {t.name: tp + t.name for t in g.terminals}
    nmap = {n: rp + n for n in g.nonterminals}
    for new in list(tmap.values()) + list(nmap.values()):
        if new in used:
            raise GrammarError(f"symbol name clash while merging a tag body: {new}", name=new)
        used.add(new)
    terms = [TerminalDef(name=tmap[t.name], regex=t.regex, priority=t.priority, is_literal=t.is_literal,
                         text=t.text, token=t.token) for t in g.terminals]
    ren = {**tmap, **nmap}
    rules = [Rule(nmap[r.origin], tuple(ren[s] for s in r.expansion), source=rp + (r.source or r.origin),
                  priority=r.priority) for r in g.rules]
    modes = [(rp + m.name, tuple(tmap[n] for n in m.terminals),
              tuple((tmap[n], rp + target) for n, target in m.switch),
              rp + m.merge_into if m.merge_into else "") for m in g.modes]
    return (terms, rules, nmap[g.start], frozenset(tmap[n] for n in g.ignore), modes,
            frozenset(tmap[n] for n in g.gaps))


def _tag_spec(tag, what: str):
    if isinstance(tag, bool) or not isinstance(tag, (str, int)):
        raise TypeError(f"{what} must be a str or a special token id, not {tag!r}")
    if isinstance(tag, str) and not tag:
        raise GrammarError(f"empty {what}")
    return tag


def tag_dispatch(tags: Mapping, stop: Iterable = (), *, whitespace: str | None = DEFAULT_WHITESPACE,
                 schema_options: Mapping | None = None) -> Grammar:
    """Grammar: free text, where each opening tag in ``tags`` starts a section
    constrained by its body grammar that ends with its closing tag.

    ``tags``: ``{open_tag: (body, close_tag)}``; ``body`` is a JSON Schema
    (dict), Lark text or a :class:`~stackmask.Grammar`; tags are texts (or
    special token ids). ``stop``: strings or special tokens that end the text.
    See the module documentation for the exact semantics."""
    if not tags:
        raise GrammarError("tag_dispatch needs at least one tag")
    schema_options = dict(schema_options or {})
    stops = [_tag_spec(s, "stop") for s in stop]
    opens = [_tag_spec(t, "opening tag") for t in tags]
    exclude = tuple(dict.fromkeys(x for x in opens + stops if isinstance(x, str)))
    used: set = set()
    terms: list[TerminalDef] = []
    rules: list[Rule] = []
    ignore: set = set()
    gaps: set = set()

    def term(name: str, **kw) -> str:
        if name in used:
            raise GrammarError(f"duplicate symbol {name}")
        used.add(name)
        terms.append(TerminalDef(name=name, regex=kw.pop("regex", ""), **kw))
        return name

    for n in ("start", "segments", "segment", "tail"):
        used.add(n)
    text = term("TEXT", text=FreeText(exclude)) if exclude else term("TEXT", regex=r"(?s:.)+")
    text_mode = [text]
    text_switch = []
    modes = []
    for i, (open_tag, value) in enumerate(tags.items()):
        try:
            body, close_tag = value
        except (TypeError, ValueError):
            raise TypeError(f"tags[{open_tag!r}] must be a pair (body, closing tag)") from None
        close_tag = _tag_spec(close_tag, "closing tag")
        bt, br, bstart, bign, bmodes, bgaps = _prefixed(_body_grammar(body, schema_options),
                                                        f"T{i}_", f"t{i}_", used)
        terms.extend(bt)
        rules.extend(br)
        ignore |= bign
        gaps |= bgaps
        mode = f"tag{i}"
        body_sym = f"tag{i}_body"
        used.add(body_sym)
        special = term(f"TAG{i}", token=(open_tag, False))
        text_mode.append(special)
        text_switch.append((special, mode))
        rules.append(Rule("segment", (special, body_sym), source="segment"))
        rules.append(Rule("segment", (text, special, body_sym), source="segment"))
        if isinstance(open_tag, str):
            until = term(f"TEXT_TAG{i}", text=FreeText(exclude, until=open_tag))
            text_mode.append(until)
            text_switch.append((until, mode))
            rules.append(Rule("segment", (until, body_sym), source="segment"))
        close_names = [term(f"TAG{i}_CLOSE", token=(close_tag, False))]
        if isinstance(close_tag, str):
            close_names.append(term(f"TAG{i}_CLOSE_TEXT", regex=re.escape(close_tag), is_literal=True))
        # the body's own modes (a schema's value modes): the tag's whitespace and closing
        # tags are read in each (the parser tells where they fit), and the opening tag
        # switches to the first
        inner = bmodes or [(mode, tuple(t.name for t in bt), (), "")]
        first_name = inner[0][0]

        def rename(x):
            return mode if x == first_name else x
        inner = [(rename(n), ts, tuple((a, rename(b)) for a, b in sw), rename(into))
                 for n, ts, sw, into in inner]
        extra = list(close_names)
        close_sym = f"tag{i}_close"
        used.add(close_sym)
        for c in close_names:
            rules.append(Rule(close_sym, (c,), source=close_sym))
        if whitespace is not None and not bgaps:
            ws = term(f"TAG{i}_WS", regex=whitespace)
            extra.append(ws)
            for pre in ((), (ws,)):
                for post in ((), (ws,)):
                    rules.append(Rule(body_sym, pre + (bstart,) + post + (close_sym,), source=body_sym))
        else:
            rules.append(Rule(body_sym, (bstart, close_sym), source=body_sym))
        for n, ts, sw, into in inner:
            modes.append(LexerMode(n, ts + tuple(extra), sw + tuple((c, "text") for c in close_names),
                                   merge_into=into))
    rules.append(Rule("start", ("segments", "tail"), source="start"))
    rules.append(Rule("segments", (), source="segments"))
    rules.append(Rule("segments", ("segments", "segment"), source="segments"))
    rules.append(Rule("tail", (), source="tail"))
    rules.append(Rule("tail", (text,), source="tail"))
    for k, s in enumerate(stops):
        special = term(f"STOP{k}", token=(s, False))
        text_mode.append(special)
        text_switch.append((special, "stopped"))
        rules.append(Rule("tail", (special,), source="tail"))
        rules.append(Rule("tail", (text, special), source="tail"))
        if isinstance(s, str):
            until = term(f"TEXT_STOP{k}", text=FreeText(exclude, until=s))
            text_mode.append(until)
            text_switch.append((until, "stopped"))
            rules.append(Rule("tail", (until,), source="tail"))
    all_modes = [LexerMode("text", tuple(text_mode), tuple(text_switch))] + modes
    if stops:
        all_modes.append(LexerMode("stopped", ()))
    return Grammar.build(terms, rules, "start", ignore=ignore, modes=all_modes, gaps=gaps)


def tool_call_schema(tools: Iterable) -> dict:
    """JSON Schema of one call of any of ``tools``: ``{"name": <name>,
    "arguments": <parameters>}``. A tool is ``{"name", "parameters"}`` or
    OpenAI's ``{"type": "function", "function": {"name", "parameters"}}``
    (no ``parameters``: any object)."""
    branches = []
    for t in tools:
        f = t.get("function", t) if isinstance(t, Mapping) else None
        if not isinstance(f, Mapping) or not isinstance(f.get("name"), str):
            raise GrammarError(f"a tool must have a name: {t!r}")
        params = f.get("parameters", {"type": "object"})
        branches.append({"type": "object",
                         "properties": {"name": {"const": f["name"]}, "arguments": params},
                         "required": ["name", "arguments"], "additionalProperties": False})
    if not branches:
        raise GrammarError("tool_call_schema needs at least one tool")
    return branches[0] if len(branches) == 1 else {"anyOf": branches}


def tool_calling(tools: Iterable, *, open_tag="<tool_call>", close_tag="</tool_call>",
                 stop: Iterable = (), whitespace: str | None = DEFAULT_WHITESPACE,
                 schema_options: Mapping | None = None) -> Grammar:
    """Free text with any number of ``<tool_call>{"name": ..., "arguments":
    ...}</tool_call>`` sections (Qwen/Hermes style), each a call of one of
    ``tools`` (see :func:`tool_call_schema`)."""
    return tag_dispatch({open_tag: (tool_call_schema(tools), close_tag)}, stop=stop,
                        whitespace=whitespace, schema_options=schema_options)


def needs_glr(grammar: Grammar) -> bool:
    """Whether ``grammar`` has LALR(1) conflicts (then use ``ambiguous=True``)."""
    from ..glr.lalr import lalr_conflicts
    return bool(lalr_conflicts(grammar))
