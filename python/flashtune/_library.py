"""Finding and loading libflashtune with ctypes, and the C API's types.

The library is looked for, in order: the file named by $FLASHTUNE_LIBRARY; ``lib/`` next to this
package (an installed copy); the build trees of a source checkout (``build/runtime``,
``build-rt/runtime``); the system's library path. Nothing is compiled at install time."""
import ctypes
import ctypes.util
import os
import threading

# ft_status codes (runtime/include/flashtune.h).
FT_OK = 0
FT_ERR_INVALID_ARGUMENT = 1
FT_ERR_UNSUPPORTED = 2
FT_ERR_NO_DEVICE = 3
STATUS_NAMES = ["FT_OK", "FT_ERR_INVALID_ARGUMENT", "FT_ERR_UNSUPPORTED", "FT_ERR_NO_DEVICE", "FT_ERR_CUDA",
                "FT_ERR_COMPILE", "FT_ERR_DB", "FT_ERR_OUT_OF_MEMORY", "FT_ERR_INTERNAL"]

_LIB_NAME = "libflashtune.so"


class FlashtuneError(RuntimeError):
    """A libflashtune call failed; ``status`` is the ft_status name, the text is the library's."""

    def __init__(self, status, message):
        self.status = STATUS_NAMES[status] if 0 <= status < len(STATUS_NAMES) else str(status)
        super().__init__(f"{self.status}: {message}")


class LibraryNotFound(FlashtuneError):
    """libflashtune could not be found or loaded; the message lists every place looked at."""

    def __init__(self, message):
        self.status = "not found"
        RuntimeError.__init__(self, message)


class AttentionDesc(ctypes.Structure):
    """ft_attention_desc: the same field order and types as the C struct."""
    _fields_ = [
        ("batch", ctypes.c_int), ("heads", ctypes.c_int),
        ("seqlen_q", ctypes.c_int), ("seqlen_k", ctypes.c_int),
        ("head_dim", ctypes.c_int), ("head_dim_v", ctypes.c_int),
        ("dtype", ctypes.c_int), ("causal", ctypes.c_int),
        ("softmax_scale", ctypes.c_float),
        ("q_stride", ctypes.c_int64 * 3), ("k_stride", ctypes.c_int64 * 3),
        ("v_stride", ctypes.c_int64 * 3), ("o_stride", ctypes.c_int64 * 3),
    ]


def candidate_paths():
    """Where the library is looked for, in order."""
    paths = []
    env = os.environ.get("FLASHTUNE_LIBRARY")
    if env:
        paths.append(env)
    here = os.path.dirname(os.path.abspath(__file__))
    paths.append(os.path.join(here, "lib", _LIB_NAME))
    repo = os.path.dirname(os.path.dirname(here))   # python/flashtune -> the checkout's root
    for build in ("build", "build-rt"):
        paths.append(os.path.join(repo, build, "runtime", _LIB_NAME))
    system = ctypes.util.find_library("flashtune")
    if system:
        paths.append(system)
    return paths


def _declare(lib):
    p, i, sz = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
    desc = ctypes.POINTER(AttentionDesc)
    sigs = {
        "ft_open": ([ctypes.c_char_p, ctypes.POINTER(p)], i),
        "ft_close": ([p], None),
        "ft_last_error": ([p], ctypes.c_char_p),
        "ft_version": ([], ctypes.c_char_p),
        "ft_attention_forward": ([p, desc, p, p, p, p, p, p], i),
        "ft_attention_backward": ([p, desc, p, p, p, p, p, p, p, p, p, p], i),
        "ft_attention_forward_reference": ([p, desc, p, p, p, p, p, p], i),
        "ft_attention_backward_reference": ([p, desc, p, p, p, p, p, p, p, p, p, p], i),
        "ft_describe_choice": ([p, desc, i, ctypes.c_char_p, sz], i),
    }
    for name, (args, res) in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = res
    return lib


_lock = threading.Lock()
_lib = None
_contexts = {}


def library():
    """The loaded library (loaded once); raises LibraryNotFound saying where it looked."""
    global _lib
    with _lock:
        if _lib is None:
            tried = []
            for path in candidate_paths():
                if not os.path.sep in path or os.path.exists(path):
                    try:
                        _lib = _declare(ctypes.CDLL(path))
                        break
                    except OSError as e:
                        tried.append(f"{path} ({e})")
                else:
                    tried.append(f"{path} (no such file)")
            if _lib is None:
                raise LibraryNotFound("libflashtune not found; looked at: " + "; ".join(tried) +
                                      ". Build it (cmake --build build) or set FLASHTUNE_LIBRARY to its path.")
        return _lib


def database_path():
    """$FLASHTUNE_DB when set, else None: the winners shipped inside the library."""
    return os.environ.get("FLASHTUNE_DB") or None


def context():
    """The ft_context for the current database setting, opened once per process."""
    lib = library()
    db = database_path()
    with _lock:
        ctx = _contexts.get(db)
        if ctx is None:
            handle = ctypes.c_void_p()
            status = lib.ft_open(db.encode() if db else None, ctypes.byref(handle))
            if status != FT_OK:
                raise FlashtuneError(status, lib.ft_last_error(None).decode(errors="replace"))
            ctx = _contexts[db] = handle
        return ctx


def check(status, ctx):
    """Raises for a failed call: ValueError for bad arguments, FlashtuneError otherwise."""
    if status == FT_OK:
        return
    message = library().ft_last_error(ctx).decode(errors="replace")
    if status == FT_ERR_INVALID_ARGUMENT:
        raise ValueError(message)
    raise FlashtuneError(status, message)
