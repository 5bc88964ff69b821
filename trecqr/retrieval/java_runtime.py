"""The Java runtime and Pyserini behind the Lucene backend (:mod:`.lucene`): which Java home to
use, Anserini's jar, and the JVM started once through pyjnius.

A user's ``JAVA_HOME`` wins; when it is unset, one is chosen under ``/usr/lib/jvm`` before
pyjnius starts the JVM (:func:`pick_java_home`: Java 17 first, the version Pyserini 0.22.1 is
tested with here, then 11 and 21, then any newer: a newer JDK is untested with 0.22.1's
libraries, so it is only a last resort). Apart from :mod:`.lucene` so that the backend's module
says how it indexes and searches, and this one how it finds what it runs on.
"""

from __future__ import annotations

import os
import re
import shutil
from importlib import metadata

from trecqr.errors import UsageError

JVM_ROOT = "/usr/lib/jvm"
JAVA_PREFERENCE = (17, 11, 21)  # then any other version >= 11, oldest first
INSTALL_HINT = ("pip install 'trecqr[lucene]' (pyserini 0.22.1) and a Java 11+ runtime, "
                "e.g. apt-get install openjdk-17-jdk-headless")


def java_version(home) -> int | None:
    """The major version of the Java runtime at home (from its ``release`` file), or None
    when home holds no usable runtime (no ``bin/java`` or no ``libjvm.so``)."""
    home = os.fspath(home)
    if not os.path.isfile(os.path.join(home, "bin", "java")):
        return None
    if not (os.path.isfile(os.path.join(home, "lib", "server", "libjvm.so")) or
            os.path.isfile(os.path.join(home, "jre", "lib", "amd64", "server", "libjvm.so"))):
        return None
    try:
        with open(os.path.join(home, "release"), encoding="utf-8") as fh:
            text = fh.read()
    except OSError:
        return None
    m = re.search(r'^JAVA_VERSION="(\d+)(?:\.(\d+))?', text, re.M)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2)) if major == 1 and m.group(2) else major  # "1.8.0" is Java 8


def pick_java_home(root=JVM_ROOT) -> str | None:
    """The Java home to use under root: 17, else 11, else 21, else the oldest newer one (>= 11);
    None when there is none. Symlinked aliases of one runtime count once."""
    found = {}
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return None
    for name in names:
        path = os.path.join(root, name)
        real = os.path.realpath(path)
        if real in found or not os.path.isdir(real):
            continue
        version = java_version(real)
        if version is not None and version >= 11:
            found[real] = version

    def rank(item):
        real, version = item
        pref = JAVA_PREFERENCE.index(version) if version in JAVA_PREFERENCE else \
            len(JAVA_PREFERENCE)
        return pref, version, real

    return min(found.items(), key=rank)[0] if found else None


def ensure_java_home(environ=None, root=JVM_ROOT) -> str | None:
    """Set ``JAVA_HOME`` (when unset) to :func:`pick_java_home`'s choice; return the one in use.

    Must run before pyjnius is imported (it reads JAVA_HOME once, when it starts the JVM). A
    JAVA_HOME that is set is kept, but one naming a Java older than 11 is a UsageError.
    """
    environ = os.environ if environ is None else environ
    home = environ.get("JAVA_HOME")
    if home:
        if not os.path.isfile(os.path.join(home, "bin", "java")):
            raise UsageError(f"JAVA_HOME={home} holds no Java runtime (no bin/java); set it to "
                             "a Java 11+ home (tested: 17) or unset it to let trecqr pick one")
        version = java_version(home)
        if version is not None and version < 11:
            raise UsageError(f"JAVA_HOME={home} is Java {version}; Pyserini 0.22.1 needs Java "
                             "11+ (unset JAVA_HOME to let trecqr pick one under /usr/lib/jvm)")
        return home
    home = pick_java_home(root)
    if home is not None:
        environ["JAVA_HOME"] = home
    return home


def import_pyserini():
    """The pyserini package (cheap: its __init__ imports nothing); a UsageError without it."""
    try:
        import pyserini
    except ImportError:
        raise UsageError(f"the lucene backend needs Pyserini: {INSTALL_HINT}") from None
    return pyserini


def anserini_jar() -> str:
    """Pyserini's Anserini fat jar (``ANSERINI_CLASSPATH`` wins, as in Pyserini)."""
    pyserini = import_pyserini()
    folder = os.environ.get("ANSERINI_CLASSPATH") or os.path.join(
        os.path.dirname(pyserini.__file__), "resources", "jars")
    jars = sorted(f for f in os.listdir(folder) if re.fullmatch(r"anserini-.*-fatjar\.jar", f)) \
        if os.path.isdir(folder) else []
    if not jars:
        raise UsageError(f"{folder}: no anserini-*-fatjar.jar (a broken Pyserini install?)")
    return os.path.join(folder, max(jars, key=lambda f: os.path.getctime(os.path.join(folder, f))))


def java_binary() -> str:
    home = ensure_java_home()
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.path.isfile(java):
        raise UsageError(f"no Java runtime found (JAVA_HOME unset, nothing under {JVM_ROOT}, "
                         f"no java on PATH): {INSTALL_HINT}")
    return java


def jvm():
    """(autoclass, JArrayList) from Pyserini's class path setup, the JVM started with a Java
    :func:`ensure_java_home` chose."""
    import_pyserini()
    ensure_java_home()
    try:
        from pyserini.pyclass import JArrayList, autoclass
    except ImportError as exc:
        raise UsageError(f"the lucene backend needs Pyserini and pyjnius ({exc}): "
                         f"{INSTALL_HINT}") from None
    except Exception as exc:  # jnius could not start a JVM
        raise UsageError(f"cannot start Java for Pyserini ({' '.join(str(exc).split())}); "
                         "set JAVA_HOME to a Java 11+ home (tested: 17)") from None
    return autoclass, JArrayList


def versions() -> dict:
    out = {}
    try:
        out["pyserini"] = metadata.version("pyserini")
    except Exception:
        pass
    home = os.environ.get("JAVA_HOME")
    if home:
        out["java"] = java_version(home)
    return out
