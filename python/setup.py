"""Builds the wheel with libflashtune inside: `pip install ./python` (or `pip wheel ./python`) from a
flashtune checkout configures and builds the library alone with CMake (no Lua, cmocka or tools:
the CUDA toolkit's NVRTC and cuda.h, and SQLite, are what it needs), with the package's C hot path
(flashtune/_hotpath.c, a CPython extension on the stable ABI) when this Python's headers are there,
then packs them as flashtune/lib/libflashtune.so and flashtune/lib/_hotpath.abi3.so (and the
checkout's LICENSE as flashtune/LICENSE). The wheel is
tagged for the platform: cp39-abi3-linux_x86_64 with the hot path (any CPython >= 3.9),
py3-none-linux_x86_64 without it. FLASHTUNE_CMAKE_ARGS adds CMake arguments (a CMAKE_PREFIX_PATH,
say); FLASHTUNE_PREBUILT names a libflashtune.so to pack instead of building (with the hot path
beside it, if it is there). The package metadata is pyproject.toml's. python/build_manylinux.sh
makes the wheel to publish from this one (a manylinux tag, SQLite inside)."""
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig

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


HOTPATH = "_hotpath.abi3.so"


def build_library(build_temp):
    """libflashtune built by CMake in build_temp (the library alone, and the hot path when this
    Python has its headers); the library's path (the hot path lies beside it, if built)."""
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
    include = sysconfig.get_paths()["include"]
    targets = ["flashtune_shared"]
    if os.path.isfile(os.path.join(include, "Python.h")):
        configure.append(f"-DFLASHTUNE_PYTHON_INCLUDE={include}")
        targets.append("flashtune_hotpath")
    else:
        print(f"flashtune: no Python.h in {include}: the wheel gets no C hot path (calls take the Python path)")
    configure += shlex.split(os.environ.get("FLASHTUNE_CMAKE_ARGS", ""))
    subprocess.run(configure, check=True)
    subprocess.run(["cmake", "--build", build, "--target", *targets, "--parallel", str(os.cpu_count() or 2)],
                   check=True)
    return os.path.join(build, "runtime", "libflashtune.so")


class BuildWithLibrary(build_py):
    """The Python files, then the library (one file: the soname's links would be packed as copies)
    and the hot path beside them."""

    def run(self):
        super().run()
        built = os.path.realpath(build_library(os.path.abspath(self.get_finalized_command("build").build_temp)))
        target = os.path.join(self.build_lib, "flashtune", "lib")
        os.makedirs(target, exist_ok=True)
        shutil.copyfile(built, os.path.join(target, "libflashtune.so"))
        # The project's license, inside the package (the wheel's metadata names it: pyproject.toml).
        license_file = os.path.join(ROOT, "LICENSE")
        if os.path.isfile(license_file):
            shutil.copyfile(license_file, os.path.join(self.build_lib, "flashtune", "LICENSE"))
        hotpath = os.path.join(os.path.dirname(built), HOTPATH)
        if os.path.isfile(hotpath):
            shutil.copyfile(hotpath, os.path.join(target, HOTPATH))


class PlatformWheel(bdist_wheel):
    """This platform; with the hot path any CPython >= 3.9 (its stable ABI), else any Python 3: the
    package is Python plus a C library it loads with ctypes."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        platform = tuple(super().get_tag()[2:])
        build_py = self.get_finalized_command("build_py")
        if os.path.isfile(os.path.join(build_py.build_lib, "flashtune", "lib", HOTPATH)):
            return ("cp39", "abi3") + platform
        return ("py3", "none") + platform


class WithLibrary(Distribution):
    """A distribution holding a platform's binary (the files go to platlib, not purelib)."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibrary, "bdist_wheel": PlatformWheel}, distclass=WithLibrary)
