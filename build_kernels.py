"""Build-time only (pyproject.toml's ``[tool.setuptools.cmdclass]``): setuptools' ``build_ext``
with one check in front. trecqr's C kernels (``[[tool.setuptools.ext-modules]]``) are required,
so a build from source on a machine without a working C compiler must stop, and say why in one
line, instead of a page of compiler noise or a traceback; and it must say what to do instead
(install a compiler, or a built wheel, which needs none).

The check compiles an empty C file with the compiler setuptools chose (``CC`` included) before
any kernel: a compiler that cannot build that is missing or broken, while an error in a kernel
itself (the compiler works) is shown as the compiler printed it. This file is not part of the
installed package; the sdist carries it (MANIFEST.in).
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile

from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, ExecError, PlatformError, SetupError


def _compiler_name(compiler) -> str:
    """The command the compiler runs (``gcc``, ``false``...) or its kind (``msvc``)."""
    cmd = getattr(compiler, "compiler_so", None) or getattr(compiler, "compiler", None)
    if isinstance(cmd, (list, tuple)) and cmd:
        return os.path.basename(str(cmd[0]))
    return getattr(compiler, "compiler_type", "the C compiler")


class NoCompiler(SetupError):
    """setuptools prints a DistutilsError as one line ``error: ...``, with no traceback."""


class BuildKernels(build_ext):
    """``build_ext`` that fails in one line when no C compiler works (the kernels are required)."""

    def build_extensions(self) -> None:
        if self.extensions:
            problem = self._compiler_problem()
            if problem is not None:
                raise NoCompiler(
                    f"trecqr's C kernels need a C compiler, and {problem}: install one (gcc or "
                    f"clang; Visual Studio Build Tools on Windows), or install a trecqr wheel, "
                    f"which needs none (pip install --only-binary trecqr trecqr)")
        super().build_extensions()

    def _compiler_problem(self) -> str | None:
        """None when the compiler builds an empty C file, else what went wrong, in words."""
        name = _compiler_name(self.compiler)
        log = logging.getLogger()  # distutils logs each command line at INFO: not the probe's
        level = log.level
        log.setLevel(logging.WARNING)
        try:
            with tempfile.TemporaryDirectory(prefix="trecqr-cc-") as tmp:
                src = os.path.join(tmp, "probe.c")
                with open(src, "w", encoding="ascii") as f:
                    f.write("int trecqr_probe(void) { return 0; }\n")
                self.compiler.compile([src], output_dir=tmp)
        except (CCompilerError, ExecError, PlatformError, OSError):
            cc = os.environ.get("CC")
            how = "was not found" if shutil.which(name) is None else "did not compile a test file"
            return f"{name!r}" + (f" (CC={cc})" if cc else "") + f" {how}"
        finally:
            log.setLevel(level)
        return None
