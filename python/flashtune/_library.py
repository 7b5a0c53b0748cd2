"""Finding and loading libflashtune with ctypes, and the C API's types.

The library is the file named by $FLASHTUNE_LIBRARY when it is set (a missing or wrong file there
is an error, never passed over); otherwise it is looked for, in order: ``lib/`` next to this
package (an installed copy); the build trees of a source checkout (``build/runtime``,
``build-rt/runtime``); the system's library path. Nothing is compiled at install time."""
import atexit
import ctypes
import ctypes.util
import os
import struct
import sys
import threading

from . import _nvrtc

# ft_status codes (runtime/include/flashtune.h).
FT_OK = 0
FT_ERR_INVALID_ARGUMENT = 1
FT_ERR_UNSUPPORTED = 2
FT_ERR_NO_DEVICE = 3
FT_ALIGN_TOP_LEFT = 0
FT_ALIGN_BOTTOM_RIGHT = 1
STATUS_NAMES = ["FT_OK", "FT_ERR_INVALID_ARGUMENT", "FT_ERR_UNSUPPORTED", "FT_ERR_NO_DEVICE", "FT_ERR_CUDA",
                "FT_ERR_COMPILE", "FT_ERR_DB", "FT_ERR_OUT_OF_MEMORY", "FT_ERR_INTERNAL", "FT_ERR_IO"]

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


# ft_attention_desc field by field, in the C struct's order: (name, ctypes type, struct code). The
# ctypes mirror (AttentionDesc) and the packed form (DESC) both come from it, and the library's
# own layout (ft_attention_desc_layout) is checked against it when the library is loaded.
DESC_FIELDS = [
    ("struct_size", ctypes.c_size_t, "N"),
    ("batch", ctypes.c_int, "i"), ("heads", ctypes.c_int, "i"),
    ("seqlen_q", ctypes.c_int, "i"), ("seqlen_k", ctypes.c_int, "i"),
    ("head_dim", ctypes.c_int, "i"), ("head_dim_v", ctypes.c_int, "i"),
    ("dtype", ctypes.c_int, "i"), ("causal", ctypes.c_int, "i"),
    ("softmax_scale", ctypes.c_float, "f"),
    ("q_stride", ctypes.c_int64 * 3, "3q"), ("k_stride", ctypes.c_int64 * 3, "3q"),
    ("v_stride", ctypes.c_int64 * 3, "3q"), ("o_stride", ctypes.c_int64 * 3, "3q"),
    # version 2 (flashtune 0.2.0)
    ("causal_align", ctypes.c_int, "i"), ("window", ctypes.c_int, "i"),
    ("window_left", ctypes.c_int, "i"), ("window_right", ctypes.c_int, "i"),
    # after 0.2.0
    ("deterministic", ctypes.c_int, "i"), ("heads_k", ctypes.c_int, "i"),
    ("softcap", ctypes.c_float, "f"), ("reserved", ctypes.c_int, "i"),
    # a variable-length batch (device prefix sums; NULL and 0 for a dense one)
    ("cu_seqlens_q", ctypes.c_void_p, "P"), ("cu_seqlens_k", ctypes.c_void_p, "P"),
    ("total_q", ctypes.c_int, "i"), ("total_k", ctypes.c_int, "i"),
    # attention sinks and their gradient (device memory, [heads]; NULL for none)
    ("sinks", ctypes.c_void_p, "P"), ("dsinks", ctypes.c_void_p, "P"),
    # float32: 1 lets products round to TF32 (0: float32's accuracy, three TF32 products each);
    # 1: the prefix sums vouched for, not read back (_varlen's checked sums)
    ("allow_tf32", ctypes.c_int, "i"), ("prefix_sums_checked", ctypes.c_int, "i"),
]


class AttentionDesc(ctypes.Structure):
    """ft_attention_desc (DESC_FIELDS). struct_size is set to this struct's size on construction
    (the ABI rule of flashtune.h: the library reads that many bytes)."""
    _fields_ = [(name, ctype) for name, ctype, _ in DESC_FIELDS]

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        if not args and "struct_size" not in kw:
            self.struct_size = ctypes.sizeof(AttentionDesc)


# The same struct for the per-call path: struct.pack fills it in one C call, where filling an
# AttentionDesc costs a Python operation per field. Native alignment pads after softmax_scale as
# the C compiler does. pack raises for values out of the C types' range (ctypes wraps them).
DESC = struct.Struct("".join(code for _, _, code in DESC_FIELDS))
DESC_SIZE = DESC.size
assert DESC_SIZE == ctypes.sizeof(AttentionDesc)


def desc_layout():
    """The package's ft_attention_desc as ft_attention_desc_layout words it: "name:offset:size"."""
    return " ".join(f"{name}:{getattr(AttentionDesc, name).offset}:{getattr(AttentionDesc, name).size}"
                    for name, _, _ in DESC_FIELDS)


def layout_mismatch(library_layout):
    """None when the library's ft_attention_desc (its ft_attention_desc_layout text) is the
    package's; else the first field that differs, in words."""
    ours = desc_layout().split()
    theirs = library_layout.split()
    for i in range(max(len(ours), len(theirs))):
        mine = ours[i] if i < len(ours) else "(none)"
        other = theirs[i] if i < len(theirs) else "(none)"
        if mine != other:
            return (f"its ft_attention_desc differs from this package's at field {i}: the library has "
                    f"{other}, the package {mine} (name:offset:size); a library and a package of "
                    "different versions?")
    return None


# A packed desc with deterministic set (the backward sets it on the forward's desc), or dsinks.
DETERMINISTIC_AT = AttentionDesc.deterministic.offset
DSINKS_AT = AttentionDesc.dsinks.offset
PREFIX_SUMS_CHECKED_AT = AttentionDesc.prefix_sums_checked.offset


def with_deterministic(desc):
    return desc[:DETERMINISTIC_AT] + b"\x01\x00\x00\x00" + desc[DETERMINISTIC_AT + 4:]


def with_prefix_sums_checked(desc):
    """desc with prefix_sums_checked set: the library trusts its prefix sums (checked before)."""
    return desc[:PREFIX_SUMS_CHECKED_AT] + b"\x01\x00\x00\x00" + desc[PREFIX_SUMS_CHECKED_AT + 4:]


def with_dsinks(desc, pointer):
    """desc with its dsinks field (the sinks' gradient, written by the backward) set to pointer."""
    return desc[:DSINKS_AT] + struct.pack("P", pointer) + desc[DSINKS_AT + struct.calcsize("P"):]


def candidate_paths():
    """Where the library is looked for, in order: $FLASHTUNE_LIBRARY alone when it is set."""
    env = os.environ.get("FLASHTUNE_LIBRARY")
    if env:
        return [env]
    paths = []
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
        "ft_capture_to": ([p, ctypes.c_char_p], i),
        "ft_capture_flush": ([p], i),
    }
    for name, (args, res) in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = res
    return lib


# The per-call entry points: separate function objects (lib[name] makes a new one) that take the
# desc as DESC-packed bytes and every pointer as a plain int, so a call makes no ctypes objects.
# The calls take the caller's workspace (the _ws entry points: from PyTorch's caching allocator,
# so nothing allocates inside a CUDA graph capture). Bound when the library is loaded; used after
# handle(), which loads it.
forward = None          # ft_attention_forward_ws(ctx, desc, q, k, v, o, lse, workspace, bytes, stream)
backward = None         # ft_attention_backward_ws(ctx, desc, q .. dv, workspace, bytes, stream)
forward_ws_size = None  # ft_attention_*_workspace_size(ctx, desc, &bytes)
backward_ws_size = None


def _bind(lib):
    global forward, backward, forward_ws_size, backward_ws_size
    p, sz = ctypes.c_void_p, ctypes.c_size_t
    forward, backward = lib["ft_attention_forward_ws"], lib["ft_attention_backward_ws"]
    forward.argtypes, backward.argtypes = [p] * 7 + [p, sz, p], [p] * 11 + [p, sz, p]
    forward_ws_size, backward_ws_size = lib["ft_attention_forward_workspace_size"], \
        lib["ft_attention_backward_workspace_size"]
    forward_ws_size.argtypes = backward_ws_size.argtypes = [p, p, ctypes.POINTER(sz)]
    for fn in (forward, backward, forward_ws_size, backward_ws_size):
        fn.restype = ctypes.c_int


_lock = threading.Lock()
_lib = None
_contexts = {}


def _load(path):
    """libflashtune at path (a name without a slash: on the library path), declared and bound; the
    reason in words when path is missing, not a shared library, or another library."""
    if os.path.sep in path and not os.path.exists(path):
        return None, "no such file"
    # NVRTC (opened by the library when it first compiles) from a wheel or the toolkit, loaded
    # first where the loader would not find it; without one the library still loads, and a compile
    # says what it tried.
    _nvrtc.ensure_loaded()
    try:
        lib = _declare(ctypes.CDLL(path))
    except OSError as e:
        return None, f"cannot be loaded: {e}"
    except AttributeError as e:   # loaded, but without ft_open & co.: another library
        return None, f"is not libflashtune: {e}"
    layout = getattr(lib, "ft_attention_desc_layout", None)
    if layout is not None:   # (a library older than the layout's text has none to check)
        layout.argtypes, layout.restype = [], ctypes.c_char_p
        why = layout_mismatch(layout().decode())
        if why:
            return None, why
    _bind(lib)
    _load_hotpath(path, lib)
    return lib, None


# The package's C hot path (_hotpath.c), bound to the loaded library: None when it is not beside
# the library, was built for another version, or FLASHTUNE_HOTPATH=0 turns it off (then every call
# takes the Python path: the same results, more host time a call).
hotpath = None
HOTPATH_FILE = "_hotpath.abi3.so"
# The library's entry points the hot path calls, in bind_library's order.
HOTPATH_ENTRIES = ("ft_attention_forward_ws", "ft_attention_forward_workspace_size", "ft_attention_backward_ws")


def _load_hotpath(path, lib):
    global hotpath
    hotpath = None
    if os.environ.get("FLASHTUNE_HOTPATH", "1") == "0" or os.path.sep not in path:
        return
    file = os.path.join(os.path.dirname(os.path.realpath(path)), HOTPATH_FILE)
    if not os.path.isfile(file):
        return
    import importlib.machinery
    import importlib.util
    try:
        loader = importlib.machinery.ExtensionFileLoader("flashtune._hotpath", file)
        spec = importlib.util.spec_from_file_location("flashtune._hotpath", file, loader=loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    except ImportError:   # another platform's or interpreter's build: the Python path serves
        return
    if module.DESC_SIZE != DESC_SIZE or module.VERSION != lib.ft_version().decode():
        return
    module.bind_library(*(ctypes.cast(lib[name], ctypes.c_void_p).value for name in HOTPATH_ENTRIES))
    hotpath = module


def library():
    """The loaded library (loaded once); raises LibraryNotFound saying where it looked, or naming
    $FLASHTUNE_LIBRARY and its file when that is set and wrong."""
    global _lib
    with _lock:
        if _lib is None:
            env = os.environ.get("FLASHTUNE_LIBRARY")
            tried = []
            for path in candidate_paths():
                _lib, why = _load(path)
                if _lib is not None:
                    break
                if env:
                    raise LibraryNotFound(f"FLASHTUNE_LIBRARY={env}: {why}. Point it at libflashtune.so "
                                          "(build/runtime/ in a build tree) or unset it to search the usual places.")
                tried.append(f"{path} ({why})")
            if _lib is None:
                raise LibraryNotFound("libflashtune not found; looked at: " + "; ".join(tried) +
                                      ". Build it (cmake --build build) or set FLASHTUNE_LIBRARY to its path.")
        return _lib


def _flush_captures():
    """At exit: each context's counted calls merged into its capture file ($FLASHTUNE_CAPTURE when
    it was opened). The package never closes its contexts, so ft_close's merge would not run."""
    if _lib is None:
        return
    for ctx in list(_contexts.values()):
        status = _lib.ft_capture_flush(ctx)
        if status not in (FT_OK, FT_ERR_INVALID_ARGUMENT):   # the latter: no capture file
            sys.stderr.write(f"flashtune: {_lib.ft_last_error(ctx).decode(errors='replace')}\n")


atexit.register(_flush_captures)


def database_path():
    """$FLASHTUNE_DB when set, else None: the winners shipped inside the library."""
    return os.environ.get("FLASHTUNE_DB") or None


def context():
    """The ft_context for the current database setting, opened once per process."""
    return _open(database_path())


def _open(db):
    lib = library()
    with _lock:
        ctx = _contexts.get(db)
        if ctx is None:
            handle = ctypes.c_void_p()
            status = lib.ft_open(db.encode() if db else None, ctypes.byref(handle))
            if status != FT_OK:
                raise FlashtuneError(status, lib.ft_last_error(None).decode(errors="replace"))
            ctx = _contexts[db] = handle
        return ctx


# handle() reads $FLASHTUNE_DB from os.environ's own dict: os.environ.get costs ~0.6 us a call
# (it raises and catches a KeyError when the variable is unset). Setting or deleting through
# os.environ keeps that dict current, so the value is the one database_path() would read.
try:
    _env, _env_key, _env_decode = os.environ._data, os.environ.encodekey("FLASHTUNE_DB"), os.environ.decodevalue
except AttributeError:   # an os.environ without them: read it the documented way
    _env, _env_key, _env_decode = None, None, None
_handles = {}   # raw $FLASHTUNE_DB value (None when unset) -> its ft_context


def handle():
    """context(), for every attention call: a dict lookup once the context is open."""
    if _env is None:
        return context()
    raw = _env.get(_env_key)
    ctx = _handles.get(raw)
    if ctx is None:
        ctx = _handles[raw] = _open(_env_decode(raw) if raw else None)   # unset or empty: no database
    return ctx


def check(status, ctx):
    """Raises for a failed call: ValueError for bad arguments, FlashtuneError otherwise."""
    if status == FT_OK:
        return
    message = library().ft_last_error(ctx).decode(errors="replace")
    if status == FT_ERR_INVALID_ARGUMENT:
        raise ValueError(message)
    raise FlashtuneError(status, message)
