"""Finding NVRTC for libflashtune, which links libnvrtc.so.N (N: the CUDA major version it was
built with). The loader finds it on its own when the CUDA toolkit is where the library was built
(the library's RPATH) or on the library path; otherwise it is looked for, in order, in the NVIDIA
NVRTC wheel (``pip install nvidia-cuda-nvrtc-cu12``, or the ``cuda-toolkit[nvrtc]`` of CUDA 13),
in $CUDA_HOME / $CUDA_PATH, and in /usr/local/cuda, and loaded first, so that loading
libflashtune finds it already there."""
import ctypes
import os
import re
import site
import sys

_MISSING = re.compile(r"(libnvrtc\.so[.0-9]*): cannot open shared object file")


def missing_nvrtc(error):
    """The NVRTC file name an OSError of loading libflashtune says is missing, or None."""
    m = _MISSING.search(str(error))
    return m.group(1) if m else None


def candidate_dirs():
    """Where a missing NVRTC is looked for, in order."""
    dirs = []
    roots = list(sys.path)
    try:
        roots += site.getsitepackages() + [site.getusersitepackages()]
    except AttributeError:   # a virtualenv's old site module
        pass
    for root in roots:   # the NVIDIA wheels: nvidia/cuda_nvrtc/lib (CUDA 12), nvidia/cu13/lib (CUDA 13)
        for sub in ("nvidia/cuda_nvrtc/lib", "nvidia/cu13/lib", "nvidia/cu12/lib"):
            dirs.append(os.path.join(root, sub))
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            dirs += [os.path.join(os.environ[var], "lib64"), os.path.join(os.environ[var], "lib")]
    dirs += ["/usr/local/cuda/lib64", "/usr/local/cuda/lib"]
    seen, unique = set(), []
    for d in dirs:
        if d not in seen:
            seen.add(d)
            unique.append(d)
    return unique


def preload(name):
    """Loads NVRTC file `name` from the first candidate folder holding it (global symbols, so the
    library's reference resolves to it). Returns None, or why it could not, listing the folders."""
    failed = []
    dirs = candidate_dirs()
    for d in dirs:
        path = os.path.join(d, name)
        if os.path.exists(path):
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                return None
            except OSError as e:
                failed.append(f"{path}: {e}")
    where = "; ".join(failed) if failed else "no " + name + " in " + ", ".join(d for d in dirs if os.path.isdir(d))
    return (f"{name} (NVRTC, which libflashtune needs) was not found: install the CUDA toolkit, or the NVIDIA "
            f"NVRTC wheel of that CUDA version, or put its folder on LD_LIBRARY_PATH ({where})")
