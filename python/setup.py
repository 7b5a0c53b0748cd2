"""Builds the wheel with libflashtune inside: `pip install ./python` (or `pip wheel ./python`) from a
flashtune checkout configures and builds the library alone with CMake (no Lua, cmocka or tools:
the CUDA toolkit's NVRTC and cuda.h, and SQLite, are what it needs), then packs its one file as
flashtune/lib/libflashtune.so. The wheel holds a Linux library, so it is tagged for the platform
(py3-none-linux_x86_64), not as pure Python. FLASHTUNE_CMAKE_ARGS adds CMake arguments (a
CMAKE_PREFIX_PATH, say); FLASHTUNE_PREBUILT names a libflashtune.so to pack instead of building.
The package metadata is pyproject.toml's."""
import os
import shlex
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:   # setuptools before 70.1: the wheel package's
    from wheel.bdist_wheel import bdist_wheel

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def checkout_root():
    """The flashtune checkout this package sits in, or an error saying what is missing."""
    cmake_lists = os.path.join(ROOT, "CMakeLists.txt")
    if not os.path.exists(cmake_lists) or "project(flashtune" not in open(cmake_lists).read():
        sys.exit(f"flashtune: {ROOT} is not a flashtune checkout (no CMakeLists.txt of project flashtune): the "
                 "package builds libflashtune from the checkout it sits in; or set FLASHTUNE_PREBUILT to a built "
                 "libflashtune.so")
    return ROOT


def build_library(build_temp):
    """libflashtune built by CMake in build_temp (the library alone); its path."""
    prebuilt = os.environ.get("FLASHTUNE_PREBUILT")
    if prebuilt:
        if not os.path.isfile(prebuilt):
            sys.exit(f"flashtune: FLASHTUNE_PREBUILT={prebuilt} is not a file")
        return prebuilt
    for tool in ("cmake",):
        if not shutil.which(tool):
            sys.exit(f"flashtune: building libflashtune needs {tool} on PATH (and the CUDA toolkit, SQLite's headers)")
    root = checkout_root()
    build = os.path.join(build_temp, "libflashtune")
    configure = ["cmake", "-S", root, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DFLASHTUNE_BUILD_TOOLS=OFF",
                 "-DFLASHTUNE_BUILD_TESTS=OFF", "-DCMAKE_DISABLE_FIND_PACKAGE_Lua=ON"]
    configure += shlex.split(os.environ.get("FLASHTUNE_CMAKE_ARGS", ""))
    subprocess.run(configure, check=True)
    subprocess.run(["cmake", "--build", build, "--target", "flashtune_shared", "--parallel", str(os.cpu_count() or 2)],
                   check=True)
    return os.path.join(build, "runtime", "libflashtune.so")


class BuildWithLibrary(build_py):
    """The Python files, then the library beside them (one file: the soname's links would be packed as
    copies)."""

    def run(self):
        super().run()
        built = os.path.realpath(build_library(os.path.abspath(self.get_finalized_command("build").build_temp)))
        target = os.path.join(self.build_lib, "flashtune", "lib")
        os.makedirs(target, exist_ok=True)
        shutil.copyfile(built, os.path.join(target, "libflashtune.so"))


class PlatformWheel(bdist_wheel):
    """Any Python 3, this platform: the package is Python plus a C library it loads with ctypes."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        return ("py3", "none") + tuple(super().get_tag()[2:])


class WithLibrary(Distribution):
    """A distribution holding a platform's binary (the files go to platlib, not purelib)."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibrary, "bdist_wheel": PlatformWheel}, distclass=WithLibrary)
