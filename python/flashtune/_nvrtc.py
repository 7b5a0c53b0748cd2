"""Finding NVRTC for libflashtune, which opens it at run time (NVRTC 12 or 13: libnvrtc.so.13,
then .so.12, on the loader's path, then in the CUDA toolkit it was built with; $FLASHTUNE_NVRTC
overrides). A Python user may have NVRTC only as NVIDIA's wheel (``pip install
nvidia-cuda-nvrtc-cu12``, or the ``nvidia-cuda-nvrtc`` of CUDA 13), in site-packages, off the
loader's path: ``ensure_loaded`` then loads it first from there (or from $CUDA_HOME, $CUDA_PATH,
/usr/local/cuda), and the library's own lookup finds it already in the process by its name."""
import ctypes
import os
import site
import sys

# The NVRTC files libflashtune looks for, in its order (generator/gen_nvrtc_open.c).
NAMES = ("libnvrtc.so.13", "libnvrtc.so.12")


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
    library's lookup by that name finds it loaded). Returns None, or why it could not, listing the
    folders."""
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
    return (f"{name} (NVRTC, which libflashtune needs to compile kernels) was not found: install the CUDA toolkit, "
            f"or the NVIDIA NVRTC wheel of that CUDA version, or put its folder on LD_LIBRARY_PATH ({where})")


def ensure_loaded(names=NAMES):
    """Makes sure libflashtune will find NVRTC: None when the loader finds one of `names` on its
    own (or $FLASHTUNE_NVRTC names one: the library's choice), or one was loaded from a candidate
    folder; else why not (compiling will fail with the library's own words; loading does not)."""
    if os.environ.get("FLASHTUNE_NVRTC"):
        return None
    for name in names:
        try:
            ctypes.CDLL(name)
            return None
        except OSError:
            pass
    reasons = []
    for name in names:
        why = preload(name)
        if why is None:
            return None
        reasons.append(why)
    return "; ".join(reasons)
