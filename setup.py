"""Builds the optional compiled inner loops (``stackmask._native``, Cython).

Everything else is in pyproject.toml. The extension is optional: where it cannot
be built (no compiler), the install goes on and stackmask runs its pure-Python
reference path (``stackmask.native`` says which path is in use and why).
"""

import sys
from glob import glob

from setuptools import Extension, setup

try:
    from Cython.Build import cythonize
except ImportError:          # no Cython: the pure-Python path only
    ext_modules = []
else:
    ext_modules = cythonize(
        [Extension("stackmask._native", ["stackmask/_native.pyx"],
                   # included by _native.pyx (one extension; listed so that a change
                   # rebuilds it and an sdist carries it)
                   depends=sorted(glob("stackmask/_*.pxi")),
                   extra_compile_args=[] if sys.platform == "win32" else ["-O3"],
                   optional=True)],
        compiler_directives={"language_level": 3},
        quiet=True,
    )

setup(ext_modules=ext_modules)
