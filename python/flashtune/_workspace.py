"""Workspaces from PyTorch's caching allocator: the bytes a call needs, asked of the library once per
problem, and a buffer for each call. Inside a CUDA graph capture the allocator serves it from the
graph's pool, so the library never allocates there; outside, a freed buffer is reused in stream
order, so keeping it to the end of the call is enough."""
import ctypes

from . import _library

# The cu_seqlens pointers of a desc: a variable-length batch's sizes do not depend on them, and
# keying by them would make a new entry every call.
_POINTERS_AT = _library.AttentionDesc.cu_seqlens_q.offset
_POINTERS_END = _library.AttentionDesc.cu_seqlens_k.offset + ctypes.sizeof(ctypes.c_void_p)
_NO_POINTERS = bytes(_POINTERS_END - _POINTERS_AT)   # a dense batch's
_SIZES_KEPT = 4096   # problems remembered; then forgotten all at once (asking again is cheap)
_sizes = {}


def _key(kind, handle, index, desc):
    if desc[_POINTERS_AT:_POINTERS_END] != _NO_POINTERS:
        desc = desc[:_POINTERS_AT] + desc[_POINTERS_END:]
    return kind, handle.value, index, desc


def _ask(fn, handle, desc):
    n = ctypes.c_size_t()
    status = fn(handle, desc, ctypes.byref(n))
    if status:
        _library.check(status, handle)
    return n.value


def forward_bytes(handle, desc, index):
    """Bytes of the forward's workspace: what its kernel on device `index` keeps there (0 for most).
    Call with that device current: the first time, the library picks (and loads) the kernel."""
    return _bytes(_key(0, handle, index, desc), _library.forward_ws_size, handle, desc)


def backward_bytes(handle, desc):
    """Bytes of the backward's workspace: the problem's alone (no GPU needed)."""
    return _bytes(_key(1, handle, None, desc), _library.backward_ws_size, handle, desc)


def _bytes(key, fn, handle, desc):
    n = _sizes.get(key)
    return n if n is not None else _remember(key, _ask(fn, handle, desc))


def _remember(key, n):
    if len(_sizes) >= _SIZES_KEPT:
        _sizes.clear()
    _sizes[key] = n
    return n


def allocate(torch, nbytes, device):
    """(buffer, its pointer): nbytes from the caching allocator on device, or (None, None) for 0."""
    if not nbytes:
        return None, None
    buf = torch.empty((nbytes,), dtype=torch.uint8, device=device)
    return buf, buf.data_ptr()
