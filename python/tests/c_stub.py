"""A C source compiled into a shared library (cc on PATH) and loaded with ctypes: stand-ins for
libflashtune's entry points that record or ignore their calls, for test_hotpath.py and
python/bench/overhead.py."""
import ctypes
import os
import subprocess


def build(tmp, name, source):
    """lib<name>.so in folder tmp, built from source; the loaded library."""
    src, so = os.path.join(tmp, name + ".c"), os.path.join(tmp, "lib" + name + ".so")
    with open(src, "w") as f:
        f.write(source)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", so, src], check=True)
    return ctypes.CDLL(so)
