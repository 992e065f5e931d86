"""The package's imports go one way: no cycle, no lower layer importing a higher one.

Every module of ``stackmask/`` is parsed with :mod:`ast` and every import in it
is collected, wherever it is written (module level, inside functions and
classes, under ``if TYPE_CHECKING:``): ``import a.b``, ``from a.b import c``,
relative ``from . import z`` / ``from ..x import y`` and
``importlib.import_module("stackmask...")`` / ``__import__`` with a literal
name. An import of ``stackmask.p.m`` from outside package ``stackmask.p`` also
counts as an import of ``stackmask.p`` (Python runs its ``__init__``); the root
``stackmask/__init__.py`` is the top of the graph and is not counted that way.

``LAYERS`` below is the architecture of ``DESIGN.md`` ("Layout"), bottom first.
A module may import modules of its own layer or of layers below it, never above;
and the module graph has no cycle (within a layer neither).

A second check, the boundary between construction and runtime (DESIGN.md: "runtime
uses public names of the artifact only"): a runtime module imports from the compile
layer only ``from stackmask.compile import name`` with ``name`` in that package's
``__all__`` (its entry points and the artifact's types), never a module inside it; the
rest it reads as public attributes of the artifact it is given.

A third check: a module reads no private attribute (``obj._name``,
``getattr(obj, "_name")``) that it does not define itself (as ``self._name``, in
``__slots__``, as a function, class or variable), and imports no private name from
another module of the package (``from .x import _name``, ``from stackmask.x import
_name``; a private module, ``from . import _native``, is not a name):
``_name`` means "this file only". Cython modules (``.pyx``), which :mod:`ast` cannot
parse, are held to the same rule by pattern (:func:`pyx_private_reads`).
``PRIVATE_READS_ALLOWED`` lists the exceptions left, each with its reason.

Run against another checkout: ``python tests/test_layering.py /path/to/stackmask``.
"""

from __future__ import annotations

import ast
import re
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

PACKAGE = "stackmask"

#: Bottom first: (layer name, module prefixes). A module belongs to the layer of
#: the longest prefix naming it (a prefix names the module itself or a package).
LAYERS = (
    # plain support every layer may use: the error hierarchy, resource limits, bounded
    # memos, the plain-data codec of artifacts, the choice of compiled inner loops, the
    # timing of progress lines
    ("support", ("stackmask.errors", "stackmask.limits", "stackmask.memo", "stackmask.plain",
                 "stackmask.native", "stackmask._native", "stackmask.progress")),
    # the artifact files: keyed, versioned, checksummed plain data written atomically
    # (what compile writes and the runtime is given; loading one runs no code)
    ("artifact", ("stackmask.artifact",)),
    # the grammar model: plain data (rules, terminals, modes) and the Lark front end
    ("grammar", ("stackmask.grammar",)),
    # the automaton toolkit: token-set weights, NFA/DFA construction (subsets, products),
    # trimming and minimization, topological order; shared by the lexer, the ECMA regex
    # front end and the compiler
    ("wfa", ("stackmask.wfa",)),
    # regex -> byte NFA/DFA -> terminal DFAs -> combined lexer; the scanner
    ("lexer", ("stackmask.lexer",)),
    # normal form, LALR(1) tables, GSS
    ("glr", ("stackmask.glr",)),
    # the vocabulary model and its loaders
    ("vocab", ("stackmask.vocab",)),
    # analyses over grammar + lexer + tables: sentence generation, validation
    ("analysis", ("stackmask.generate", "stackmask.validate")),
    # everything that builds: tables, terminal walk, Parser DWA, exploration, artifact
    ("compile", ("stackmask.compile",)),
    # Constraint, State, commit, get_mask; reads what compile built
    ("runtime", ("stackmask.runtime",)),
    # front ends: JSON Schema, regex, tags, bundled grammars; the user-facing Grammar
    ("grammars", ("stackmask.grammars",)),
    # the top: integrations, the report CLI, the entry point, the package's public names
    ("top", ("stackmask.integrations", "stackmask.report", "stackmask.__main__", "stackmask")),
)


#: (module, attribute): private attributes of other modules still read, and why
PRIVATE_READS_ALLOWED = {
    # tiktoken's Encoding has no public name for its split pattern
    ("stackmask.report.workload", "_pat_str"): "tiktoken.Encoding has no public accessor",
}


def module_files(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file under the package dir ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_package(name: str, files: dict[str, Path]) -> bool:
    return files[name].name == "__init__.py"


def _resolve_relative(module: str, is_pkg: bool, level: int, target: str | None) -> str:
    base = module.split(".")
    if not is_pkg:
        base = base[:-1]
    if level > 1:
        base = base[:len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _from_base(module: str, is_pkg: bool, node: ast.ImportFrom) -> str | None:
    """The package module a ``from ... import`` in ``module`` imports from (relative
    ones resolved), or None when it is outside the package."""
    if node.level:
        return _resolve_relative(module, is_pkg, node.level, node.module)
    if node.module and (node.module == PACKAGE or node.module.startswith(PACKAGE + ".")):
        return node.module
    return None


def _literal_import_calls(node: ast.AST):
    """``importlib.import_module("x"[, package])`` and ``__import__("x")`` with literal names."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    if name not in ("import_module", "__import__"):
        return None
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    return None


def imports_of(module: str, path: Path, files: dict[str, Path]) -> set[str]:
    """Modules of the package ``module`` imports (see the module docstring)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_pkg = path.name == "__init__.py"
    found: set[str] = set()

    def add(name: str) -> None:
        # the longest known module that ``name`` names (``a.b.c`` may be a name in ``a.b``)
        while name and name not in files:
            name = name.rpartition(".")[0]
        if not name:
            return
        found.add(name)
        # importing ``p.m`` runs ``p/__init__`` unless we are inside ``p`` already
        parts = name.split(".")
        for k in range(2, len(parts)):
            pkg = ".".join(parts[:k])
            if not (module == pkg or module.startswith(pkg + ".")):
                found.add(pkg)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == PACKAGE or a.name.startswith(PACKAGE + "."):
                    add(a.name)
        elif isinstance(node, ast.ImportFrom):
            base = _from_base(module, is_pkg, node)
            if base is None:
                continue
            for a in node.names:
                sub = f"{base}.{a.name}"
                add(sub if sub in files else base)
        else:
            lit = _literal_import_calls(node)
            if lit is not None:
                if lit.startswith("."):
                    level = len(lit) - len(lit.lstrip("."))
                    add(_resolve_relative(module, is_pkg, level, lit.lstrip(".") or None))
                elif lit == PACKAGE or lit.startswith(PACKAGE + "."):
                    add(lit)
    found.discard(module)
    found.discard(PACKAGE)      # the root package's names: every module runs it first
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    files = module_files(root)
    return {m: imports_of(m, p, files) for m, p in files.items()}


def layer_of(module: str) -> int:
    best, rank = -1, None
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, rank = len(p), i
    if rank is None:
        raise KeyError(f"module {module} is in no layer of LAYERS")
    return rank


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    out = []
    for m, deps in sorted(graph.items()):
        lm = layer_of(m)
        for d in sorted(deps):
            ld = layer_of(d)
            if ld > lm:
                out.append(f"{m} ({LAYERS[lm][0]}) imports {d} ({LAYERS[ld][0]})")
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in graph:
                    continue
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    u = work[-1][0]
                    low[u] = min(low[u], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def _private_defs_and_reads(tree: ast.AST):
    """(private names the module defines, [(line, source, name)] of private reads on
    objects other than ``self``/``cls``)."""
    defined: set[str] = set()
    reads: list[tuple[int, str, str]] = []

    def private(name) -> bool:
        return isinstance(name, str) and name.startswith("_") and not name.startswith("__")

    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(n.name)
        elif isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name):
                    defined.add(t.id)
                    if t.id == "__slots__":
                        defined.update(c.value for c in ast.walk(n.value)
                                       if isinstance(c, ast.Constant) and isinstance(c.value, str))
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            defined.add(n.target.id)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) \
                and n.value.id in ("self", "cls"):
            defined.add(n.attr)      # self._x = ... (and reads of its own attributes)
        elif isinstance(n, ast.Attribute) and private(n.attr):
            reads.append((n.lineno, ast.unparse(n), n.attr))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) \
                and n.func.id in ("getattr", "hasattr", "setattr") and len(n.args) >= 2 \
                and isinstance(n.args[1], ast.Constant) and private(n.args[1].value):
            obj = n.args[0]
            if isinstance(obj, ast.Name) and obj.id in ("self", "cls"):
                defined.add(n.args[1].value)
            else:
                reads.append((n.lineno, ast.unparse(n), n.args[1].value))
    return defined, reads


#: files that make ``name`` a module (``from . import _native``: a module, not a name)
MODULE_SUFFIXES = (".py", ".pyx", ".pyi", *EXTENSION_SUFFIXES)


def _is_module(dotted: str, files: dict[str, Path], root: Path) -> bool:
    """Does ``dotted`` name a module of the package (source, stub or compiled extension)?"""
    if dotted in files:
        return True
    *pkg, name = dotted.split(".")
    where = root.parent.joinpath(*pkg)
    return (where / name / "__init__.py").is_file() or \
        any((where / (name + suffix)).is_file() for suffix in MODULE_SUFFIXES)


def _private_imports(module: str, path: Path, tree: ast.AST, files: dict[str, Path],
                     root: Path) -> list[tuple[int, str, str]]:
    """[(line, source, name)] of the private names ``module`` imports from other modules
    of the package (relative or absolute ``from ... import _name``)."""
    is_pkg = path.name == "__init__.py"
    out = []
    for n in ast.walk(tree):
        if not isinstance(n, ast.ImportFrom):
            continue
        base = _from_base(module, is_pkg, n)
        if base is None:
            continue
        for a in n.names:
            if a.name.startswith("_") and not a.name.startswith("__") \
                    and not _is_module(f"{base}.{a.name}", files, root):
                out.append((n.lineno, f"from {'.' * n.level}{n.module or ''} import {a.name}", a.name))
    return out


def private_reads(root: Path) -> list[str]:
    """``module:line: source`` of every private read of a name the module does not define
    and of every private name imported from another module (less
    ``PRIVATE_READS_ALLOWED``)."""
    out = []
    files = module_files(root)
    for m, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defined, reads = _private_defs_and_reads(tree)
        for line, src, name in reads:
            if name not in defined and (m, name) not in PRIVATE_READS_ALLOWED:
                out.append(f"{m}:{line}: {src}")
        for line, src, name in _private_imports(m, path, tree, files, root):
            if (m, name) not in PRIVATE_READS_ALLOWED:
                out.append(f"{m}:{line}: {src}")
    return out


_PYX_DOCS = re.compile(r'("""|\'\'\')(?:.|\n)*?\1|#[^\n]*')
_PYX_STRINGS = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')
_PYX_READ = re.compile(r"(?<![\w.])([A-Za-z]\w*)\.(_[A-Za-z]\w*)")
_PYX_GETATTR = re.compile(r"\b(?:getattr|hasattr|setattr)\(\s*([A-Za-z]\w*)\s*,\s*[\'\"](_[A-Za-z]\w*)[\'\"]")
_PYX_DEF = re.compile(r"(?:\bc?p?def\b[^\n:=(]*?\b|\bclass\s+|^\s*|self\.)(_[A-Za-z]\w*)\s*(?=[(:=,\[]|$)", re.M)


def pyx_private_reads(root: Path) -> list[str]:
    """``file:line: source`` of private attributes a Cython module (``.pyx`` and the
    ``.pxi`` files it includes, which :mod:`ast` cannot parse) reads on objects other than
    ``self``/``cls`` without defining them itself (one extension is one compilation unit:
    a name defined in any of its files counts): the same rule as for Python modules, by
    pattern, outside strings and comments (the compiled twins name their Python
    references in docstrings)."""
    out = []
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))  # noqa: E731 (keeps lines)
    files = []
    for path in sorted(root.rglob("*.pyx")) + sorted(root.rglob("*.pxi")):
        text = path.read_text(encoding="utf-8")
        with_strings = _PYX_DOCS.sub(blank, text)        # getattr's names are strings
        files.append((path, with_strings, _PYX_STRINGS.sub(blank, with_strings)))
    defined = set()
    for _, _, code in files:
        defined.update(_PYX_DEF.findall(code))
    for path, with_strings, code in files:
        for rx, where in ((_PYX_READ, code), (_PYX_GETATTR, with_strings)):
            for m in rx.finditer(where):
                obj, name = m.group(1), m.group(2)
                if obj in ("self", "cls") or name.startswith("__") or name in defined:
                    continue
                line = code.count("\n", 0, m.start()) + 1
                out.append(f"{path.relative_to(root.parent)}:{line}: {m.group(0)}")
    return out


#: the layer whose imports from the compile layer are held to its public names
BOUNDED = "runtime"


def public_names(path: Path) -> set[str]:
    """The names of the module's literal ``__all__`` (empty when it has none)."""
    for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                             for t in n.targets):
            return {c.value for c in ast.walk(n.value)
                    if isinstance(c, ast.Constant) and isinstance(c.value, str)}
    return set()


def boundary_imports(root: Path) -> list[str]:
    """``module:line: source`` of every import of a ``BOUNDED``-layer module from the
    compile layer other than ``from stackmask.compile import <a name of its __all__>``."""
    files = module_files(root)
    compile_pkg = f"{PACKAGE}.compile"
    allowed = public_names(files[compile_pkg]) if compile_pkg in files else set()
    bounded = next(i for i, (name, _) in enumerate(LAYERS) if name == BOUNDED)
    out = []
    for m, path in files.items():
        if layer_of(m) != bounded:
            continue
        is_pkg = path.name == "__init__.py"
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(n, ast.Import):
                for a in n.names:
                    if a.name == compile_pkg or a.name.startswith(compile_pkg + "."):
                        out.append(f"{m}:{n.lineno}: import {a.name}")
            elif isinstance(n, ast.ImportFrom):
                base = _from_base(m, is_pkg, n)
                if base is None:
                    continue
                src = f"from {'.' * n.level}{n.module or ''} import "
                for a in n.names:
                    if base == compile_pkg:
                        if a.name not in allowed:
                            out.append(f"{m}:{n.lineno}: {src}{a.name}")
                    elif base.startswith(compile_pkg + ".") or (
                            base == PACKAGE and a.name == "compile"):
                        out.append(f"{m}:{n.lineno}: {src}{a.name}")
    return out


def _package_root() -> Path:
    import stackmask
    return Path(stackmask.__file__).parent


def test_every_module_has_a_layer():
    graph = import_graph(_package_root())
    assert len(graph) > 40
    for m in graph:
        layer_of(m)


def test_no_import_cycle():
    found = cycles(import_graph(_package_root()))
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_no_upward_import():
    found = upward_imports(import_graph(_package_root()))
    assert not found, "lower layers importing higher ones:\n" + "\n".join(found)


def test_runtime_imports_only_the_compile_layers_public_names():
    root = _package_root()
    assert {"compile_constraint", "Compiled"} <= public_names(root / "compile" / "__init__.py")
    found = boundary_imports(root)
    assert not found, ("runtime modules importing construction internals (add a public name "
                       "to the artifact or to stackmask.compile.__all__):\n" + "\n".join(found))


def test_no_private_access_across_modules():
    found = private_reads(_package_root()) + pyx_private_reads(_package_root())
    assert not found, ("private attributes of other modules read (give them a public name):\n"
                       + "\n".join(found))


# -- the checker itself ------------------------------------------------------------

def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / PACKAGE
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def test_checker_sees_function_level_relative_and_dotted_imports(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "from .runtime import x\n",
        "errors.py": "",
        "grammar.py": "def f():\n    from .grammars import json_schema\n",
        "lexer/__init__.py": "",
        "lexer/a.py": "import stackmask.glr.lalr\n",
        "lexer/b.py": "class C:\n    def m(self):\n        from . import c\n",
        "lexer/c.py": "if True:\n    from .b import C\n",
        "glr/__init__.py": "",
        "glr/lalr.py": "import importlib\nM = importlib.import_module('stackmask.runtime')\n",
        "runtime/__init__.py": "x = 1\n",
        "grammars/__init__.py": "",
        "grammars/json_schema.py": "from ..runtime import x\n",
    })
    g = import_graph(root)
    assert g["stackmask.grammar"] == {"stackmask.grammars.json_schema", "stackmask.grammars"}
    assert g["stackmask.lexer.a"] == {"stackmask.glr.lalr", "stackmask.glr"}
    assert g["stackmask.lexer.b"] == {"stackmask.lexer.c"}
    assert g["stackmask.glr.lalr"] == {"stackmask.runtime"}
    up = upward_imports(g)
    assert any(u.startswith("stackmask.grammar (grammar) imports stackmask.grammars") for u in up)
    assert any(u.startswith("stackmask.lexer.a (lexer) imports stackmask.glr.lalr") for u in up)
    assert any(u.startswith("stackmask.glr.lalr (glr) imports stackmask.runtime") for u in up)
    assert cycles(g) == [["stackmask.lexer.b", "stackmask.lexer.c"]]


def test_checker_ignores_other_packages_and_allows_downward(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "",
        "errors.py": "import os\nfrom typing import Any\n",
        "grammar.py": "from .errors import X\nimport lark\n",
        "compile/__init__.py": "from .tables import T\n",
        "compile/tables.py": "from ..grammar import G\nfrom . import helper\n",
        "compile/helper.py": "from ..lexer import scanner\n",
        "lexer/__init__.py": "",
        "lexer/scanner.py": "",
    })
    g = import_graph(root)
    assert g["stackmask.errors"] == set()
    assert g["stackmask.compile.tables"] == {"stackmask.grammar", "stackmask.compile.helper"}
    assert g["stackmask.compile.helper"] == {"stackmask.lexer.scanner", "stackmask.lexer"}
    assert upward_imports(g) == [] and cycles(g) == []


def test_boundary_checker(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "",
        "compile/__init__.py": "from .inner import build, helper\n__all__ = ['build']\n",
        "compile/inner.py": "def build():\n    pass\ndef helper():\n    pass\n",
        "runtime/__init__.py": "",
        "runtime/a.py": ("from ..compile import build, helper\n"
                         "def f():\n    from stackmask.compile.inner import build\n"
                         "    import stackmask.compile.inner\n    from .. import compile\n"),
        "runtime/b.py": "from ..compile import build\nfrom stackmask.compile import build as b\n",
        "grammars/__init__.py": "from ..compile.inner import helper\n",
    })
    assert sorted(boundary_imports(root)) == [
        "stackmask.runtime.a:1: from ..compile import helper",
        "stackmask.runtime.a:3: from stackmask.compile.inner import build",
        "stackmask.runtime.a:4: import stackmask.compile.inner",
        "stackmask.runtime.a:5: from .. import compile"]


def test_private_read_checker(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "",
        "a.py": ("class A:\n    __slots__ = ('_s',)\n    def __init__(self):\n"
                 "        self._x = 1\n    def _m(self, other):\n"
                 "        return other._x + other._s + other._m(self)\n"),
        "b.py": ("from .a import A\n_CACHE = {}\n"
                 "def f(a, mod):\n    return a._x, getattr(a, '_s', 0), mod._CACHE, _CACHE\n"),
    })
    assert sorted(private_reads(root)) == [
        "stackmask.b:4: a._x", "stackmask.b:4: getattr(a, '_s', 0)"]


def test_private_import_checker(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "",
        "_native.pyx": "",
        "native.py": "from . import _native\n",
        "p/__init__.py": "_HIDDEN = 1\n",
        "p/_impl.py": "def _h():\n    pass\nPUBLIC = 1\n",
        "p/a.py": ("from ._impl import PUBLIC, _h\nfrom . import _impl, _HIDDEN\n"
                   "from stackmask.p._impl import _h as h2\nfrom os import _exit\n"
                   "def f():\n    from .. import native, _native\n"),
    })
    assert sorted(private_reads(root)) == [
        "stackmask.p.a:1: from ._impl import _h", "stackmask.p.a:2: from . import _HIDDEN",
        "stackmask.p.a:3: from stackmask.p._impl import _h"]



def test_pyx_private_read_checker(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "",
        "_more.pxi": "cdef _other(n):\n    return n._own, n._outside\n",
        "_fast.pyx": (
            '"""The twin of ``Node._memo`` (named in a docstring: not a read)."""\n'
            "cdef class Walk:\n    cdef object _own\n"
            "    def run(self, node, other):\n"
            "        # node._in_a_comment is not a read either\n"
            "        x = node._memo\n"
            "        y = getattr(other, '_hidden', None)\n"
            "        s = 'a._quoted'\n"
            "        return x, y, self._own, other._own, _helper(node), s\n"
            "cdef _helper(n):\n    return n._own\n"),
    })
    assert pyx_private_reads(root) == [
        "stackmask/_fast.pyx:6: node._memo", "stackmask/_fast.pyx:7: getattr(other, '_hidden'",
        "stackmask/_more.pxi:2: n._outside"]


if __name__ == "__main__":
    where = Path(sys.argv[1]) if len(sys.argv) > 1 else _package_root()
    graph = import_graph(where)
    cyc, up = cycles(graph), upward_imports(graph)
    for c in cyc:
        print("cycle:", " <-> ".join(c))
    for u in up:
        print("upward:", u)
    unplaced = [m for m in graph if not any(m == p or m.startswith(p + ".")
                                            for _, ps in LAYERS for p in ps)]
    for m in unplaced:
        print("no layer:", m)
    priv = private_reads(where) + pyx_private_reads(where)
    for r in priv:
        print("private read:", r)
    bound = boundary_imports(where)
    for b in bound:
        print("boundary:", b)
    sys.exit(1 if cyc or up or priv or bound else 0)
