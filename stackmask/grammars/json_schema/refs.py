"""``$id``/``$anchor`` indexing and ``$ref`` resolution inside one document."""

from __future__ import annotations

from urllib.parse import unquote, urldefrag, urljoin

from .common import ANNOTATIONS, _Problem, _canon


class RefsMixin:
    """Methods of the converter (:class:`..converter._Converter`) for refs."""

    def _detect_draft(self, root) -> int:
        s = root.get("$schema", "") if isinstance(root, dict) else ""
        if not isinstance(s, str):
            return 2020
        for tag, d in (("draft-04", 4), ("draft-03", 4), ("draft-06", 6), ("draft-07", 7),
                       ("2019-09", 2019), ("2020-12", 2020)):
            if tag in s:
                return d
        return 2020

    def _index(self, node, base: str, is_schema: bool):
        stack = [(node, base)]
        first = True
        while stack:
            node, base = stack.pop()
            if isinstance(node, dict):
                idv = node.get("$id")
                if not isinstance(idv, str) and self.draft <= 4:
                    idv = node.get("id")
                if isinstance(idv, str):
                    if idv.startswith("#") and self.draft <= 7 and len(idv) > 1:
                        self.anchors[(urldefrag(base)[0], idv[1:])] = node
                    else:
                        base = urljoin(base, idv)
                        self.ids[urldefrag(base)[0]] = node
                        if first:
                            self.root_base = urldefrag(base)[0]
                anc = node.get("$anchor")
                if isinstance(anc, str):
                    self.anchors[(urldefrag(base)[0], anc)] = node
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
            c = _canon(node)
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
    def resolve(self, ref, base: str, ptr: str):
        """(target node, its base, its pointer) or raise _Problem."""
        if not isinstance(ref, str):
            raise _Problem("$ref must be a string")
        full = urljoin(base, ref) if base else ref
        url, frag = urldefrag(full)
        if url in ("", self.root_base) or (not base and not url):
            doc, doc_base = self.root, self.root_base
        elif url in self.ids:
            doc = self.ids[url]
            doc_base = url
        else:
            raise _Problem(f"cannot resolve remote reference {ref!r}")
        if not frag:
            return doc, self.base(doc, doc_base), "#"
        if frag.startswith("/"):
            node = doc
            for part in frag[1:].split("/"):
                part = unquote(part).replace("~1", "/").replace("~0", "~")
                if isinstance(node, dict) and part in node:
                    node = node[part]
                elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                    node = node[int(part)]
                else:
                    raise _Problem(f"unresolvable reference {ref!r}")
            return node, self.base(node, doc_base), "#" + frag
        node = self.anchors.get((url or self.root_base, frag))
        if node is None:
            raise _Problem(f"unknown anchor in reference {ref!r}")
        return node, self.base(node, doc_base), "#" + frag

    def _ref_of(self, d):
        for k in ("$ref", "$recursiveRef", "$dynamicRef"):
            if k in d:
                return k, d[k]
        return None, None

    def deref(self, node, base, ptr, depth=0):
        """Follow a top-level $ref (drafts <= 7: siblings ignored; later: merged)."""
        if not isinstance(node, dict):
            return node, base, ptr
        k, ref = self._ref_of(node)
        if k is None:
            return node, base, ptr
        if depth > 64:
            raise _Problem("reference chain too long")
        if k == "$recursiveRef" or k == "$dynamicRef":
            if ref not in ("#",) and not (isinstance(ref, str) and ref.startswith("#")):
                raise _Problem(f"{k} {ref!r} is not supported")
            tgt, tbase, tptr = (self.root, self.root_base, "#") if ref == "#" else self.resolve(ref, base, ptr)
        else:
            tgt, tbase, tptr = self.resolve(ref, base, ptr)
        siblings = {a: b for a, b in node.items() if a != k and a not in ANNOTATIONS}
        if self.draft <= 7 or not siblings:
            return self.deref(tgt, tbase, tptr, depth + 1)
        # 2019+: $ref is an applicator next to the other keywords
        return {"allOf": [tgt, siblings]}, base, ptr
