"""Base URIs of a document's subschemas, and ``$ref`` resolution inside the document
(by the ``referencing`` library: ``$id``/``$anchor`` by each draft's rules, any URI scheme)."""

from __future__ import annotations

from urllib.parse import urldefrag, urljoin

from .common import ANNOTATIONS, Problem, canon

#: the URI the document is registered under when it has no ``$id`` of its own
_ROOT_URI = "urn:stackmask:schema-root"


def _join(base: str, ref: str) -> str:
    """``ref`` resolved against ``base`` (RFC 3986 for hierarchical schemes; a fragment-only
    ``ref`` keeps any base's document, also ``urn:`` ones, which ``urljoin`` drops)."""
    if ref.startswith("#"):
        return urldefrag(base)[0] + ref
    return urljoin(base, ref) if base else ref


class RefsMixin:
    """Methods of the converter (:class:`..converter.Converter`) for refs."""

    def detect_draft(self, root) -> int:
        s = root.get("$schema", "") if isinstance(root, dict) else ""
        if not isinstance(s, str):
            return 2020
        for tag, d in (("draft-04", 4), ("draft-03", 4), ("draft-06", 6), ("draft-07", 7),
                       ("2019-09", 2019), ("2020-12", 2020)):
            if tag in s:
                return d
        return 2020

    def index(self, node, base: str, is_schema: bool):
        stack = [(node, base)]
        first = True
        while stack:
            node, base = stack.pop()
            if isinstance(node, dict):
                idv = node.get("$id")
                if not isinstance(idv, str) and self.draft <= 4:
                    idv = node.get("id")
                # each node's base URI, for the references inside it (a draft <= 7
                # "#name" id is an anchor, not a base); resolving is referencing's
                if isinstance(idv, str) and not (idv.startswith("#") and self.draft <= 7):
                    # a base URI has no fragment ("http://x/Geometry#" is the base
                    # "http://x/Geometry": references "#/..." resolve in that document)
                    base = urldefrag(_join(base, idv))[0]
                    if first:
                        self.root_base = base
                self.base_of[id(node)] = base
                for k, v in node.items():
                    if k in ("enum", "const", "default", "examples", "example"):
                        continue
                    if isinstance(v, (dict, list)):
                        stack.append((v, base))
            elif isinstance(node, list):
                for v in node:
                    if isinstance(v, (dict, list)):
                        stack.append((v, base))
            first = False

    def canon(self, node) -> str:
        c = self.canon_memo.get(id(node))
        if c is None:
            c = canon(node)
            if id(node) in self.base_of:
                self.canon_memo[id(node)] = c
        return c

    def key(self, node, base):
        if isinstance(node, bool):
            return ("bool", node)
        return (self.canon(node), base)

    def base(self, node, default: str) -> str:
        return self.base_of.get(id(node), default)

    # -- $ref -------------------------------------------------------------------
    def _registry(self):
        """The ``referencing`` registry of the document (its ``$id``/``$anchor``
        resources, crawled by the rules of its draft)."""
        reg = getattr(self, "_reg", None)
        if reg is None:
            from referencing import Registry
            from referencing.jsonschema import DRAFT4, DRAFT6, DRAFT7, DRAFT201909, DRAFT202012
            spec = {4: DRAFT4, 6: DRAFT6, 7: DRAFT7, 2019: DRAFT201909}.get(self.draft, DRAFT202012)
            resource = spec.create_resource(self.root)
            reg = self._reg = Registry().with_resource(self.root_base or _ROOT_URI, resource).crawl()
        return reg

    def resolve(self, ref, base: str, ptr: str):
        """(target node, its base, its pointer) or raise Problem. Resolved by the
        ``referencing`` library within this document (any URI scheme: ``https:``,
        ``urn:``, ``tag:``...); a reference to another document is refused."""
        if not isinstance(ref, str):
            raise Problem("$ref must be a string")
        from referencing.exceptions import Unresolvable
        try:
            found = self._registry().resolver(base_uri=base or self.root_base or _ROOT_URI).lookup(ref)
        except Unresolvable:
            raise Problem(f"cannot resolve reference {ref!r} (references to other documents "
                           f"are not fetched)") from None
        node = found.contents
        frag = urldefrag(ref)[1]
        return node, self.base(node, base), "#" + frag

    def ref_of(self, d):
        for k in ("$ref", "$recursiveRef", "$dynamicRef"):
            if k in d:
                return k, d[k]
        return None, None

    def deref(self, node, base, ptr, depth=0):
        """Follow a top-level $ref (drafts <= 7: siblings ignored; later: merged)."""
        if not isinstance(node, dict):
            return node, base, ptr
        k, ref = self.ref_of(node)
        if k is None:
            return node, base, ptr
        if depth > 64:
            raise Problem("reference chain too long")
        if k == "$recursiveRef" or k == "$dynamicRef":
            if ref not in ("#",) and not (isinstance(ref, str) and ref.startswith("#")):
                raise Problem(f"{k} {ref!r} is not supported")
            tgt, tbase, tptr = (self.root, self.root_base, "#") if ref == "#" else self.resolve(ref, base, ptr)
        else:
            tgt, tbase, tptr = self.resolve(ref, base, ptr)
        siblings = {a: b for a, b in node.items() if a != k and a not in ANNOTATIONS}
        if self.draft <= 7 or not siblings:
            return self.deref(tgt, tbase, tptr, depth + 1)
        # 2019+: $ref is an applicator next to the other keywords; ``unevaluated*``
        # sees what both evaluate, so it stays outside them
        outer = {k: siblings.pop(k) for k in ("unevaluatedProperties", "unevaluatedItems") if k in siblings}
        return {"allOf": [tgt, siblings], **outer}, base, ptr
