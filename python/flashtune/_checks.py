"""Argument checks of flashtune.attention, made before anything touches the GPU.

Written against the tensor interface only (``dim()``, ``shape``, ``stride()``, ``dtype``,
``device``), so they run, and are tested, on a machine without a GPU or without PyTorch."""
import math
import operator
import struct

HEAD_DIM_MAX = 256   # head dims 1..256; libflashtune pads each to the next size it compiles
# torch dtype name -> ft_dtype code (runtime/include/flashtune.h)
DTYPES = {"torch.float32": 0, "torch.float16": 1, "torch.bfloat16": 2, "torch.float64": 3}
NAMES = ("query", "key", "value")
_ATTRS = ("shape", "stride", "dtype", "device", "data_ptr", "dim")


def _is_tensor(x):
    return all(hasattr(x, a) for a in _ATTRS)


def no_rows(query):
    """Whether the call has no row to compute: a leading dimension (batch, heads) or the queries of
    length 0, the head dim not; SDPA returns an empty O then."""
    shape = tuple(query.shape) if _is_tensor(query) else ()
    return len(shape) >= 2 and shape[-1] > 0 and 0 in shape[:-1]


_FLOAT32_MAX = 3.4028234663852886e38


def _float32_holds(name, value):
    """A finite value > 0 that the descriptor's float32 field must hold: ValueError naming the argument
    when it overflows there or rounds to 0 (which the library reads as "the default")."""
    if value > _FLOAT32_MAX or struct.unpack("f", struct.pack("f", value))[0] == 0.0:
        raise ValueError(f"{name}={value!r}: float32 cannot hold it (the kernels take it as a float32: "
                         "about 1.4e-45 to 3.4e+38)")


def check_options(is_causal, causal, scale):
    """is_causal, its alias causal and scale (attn_mask and dropout_p go to the fallback,
    _fallback.reason); returns (causal, scale) resolved."""
    if causal is not None and bool(causal) != bool(is_causal) and is_causal:
        raise ValueError(f"causal={causal!r} and is_causal={is_causal!r} disagree; give one of them")
    causal = bool(is_causal) if causal is None else bool(causal)
    if scale is not None:
        if isinstance(scale, bool) or not isinstance(scale, (int, float)):
            raise TypeError(f"scale: expected a float or None, got {type(scale).__name__}")
        if not math.isfinite(scale) or scale <= 0:
            raise ValueError(f"scale={scale!r}: must be a finite number > 0 (None means 1/sqrt(head_dim))")
        _float32_holds("scale", scale)
    return causal, scale


# causal_align keyword -> ft_attention_desc.causal_align (FT_ALIGN_TOP_LEFT, FT_ALIGN_BOTTOM_RIGHT)
ALIGNS = {"top_left": 0, "bottom_right": 1}
# (causal_align, window, window_left, window_right) of the desc when no keyword asks for more
NO_MASK = (0, 0, 0, 0)
_INT_MAX = 2 ** 31 - 1


def check_mask(causal, causal_align, window_size):
    """causal_align and window_size (causal already resolved); returns the desc's (causal_align,
    window, window_left, window_right). Raises TypeError/ValueError naming the argument."""
    if causal_align == "top_left" and window_size is None:   # the common call: nothing to check
        return NO_MASK
    if not isinstance(causal_align, str):
        raise TypeError(f"causal_align: expected 'top_left' or 'bottom_right', got {type(causal_align).__name__}")
    align = ALIGNS.get(causal_align)
    if align is None:
        raise ValueError(f"causal_align={causal_align!r}: expected 'top_left' or 'bottom_right'")
    if window_size is None:
        return align, 0, 0, 0
    if isinstance(window_size, (str, bytes)) or not hasattr(window_size, "__len__") or len(window_size) != 2:
        raise TypeError(f"window_size: expected a pair (left, right) of ints, -1 for unlimited, or None; got "
                        f"{window_size!r}")
    sides = []
    for name, x in zip(("left", "right"), window_size):
        if isinstance(x, bool):
            raise TypeError(f"window_size: {name} side {x!r} is a bool; expected an int >= -1")
        try:
            x = operator.index(x)
        except TypeError:
            raise TypeError(f"window_size: {name} side {x!r} is a {type(x).__name__}; expected an int >= -1") \
                from None
        if x < -1 or x > _INT_MAX:
            raise ValueError(f"window_size={tuple(window_size)!r}: the {name} side must be >= 0, or -1 for no "
                             f"limit (and below 2^31)")
        sides.append(x)
    left, right = sides
    if causal and right not in (0, -1):
        raise ValueError(f"window_size={tuple(window_size)!r} with is_causal=True: a causal mask hides every key "
                         "right of the diagonal, so the right side must be 0 or -1")
    return align, 1, left, right


def check_allow_tf32(allow_tf32):
    """allow_tf32 as given: True or False."""
    if not isinstance(allow_tf32, bool):
        raise TypeError(f"allow_tf32: expected True or False, got {type(allow_tf32).__name__}")
    return allow_tf32


def check_deterministic(deterministic):
    """deterministic as given: True, False or None (follow torch.use_deterministic_algorithms)."""
    if deterministic is not None and not isinstance(deterministic, bool):
        raise TypeError(f"deterministic: expected True, False or None, got {type(deterministic).__name__}")
    return deterministic


def check_softcap(softcap):
    """The softcap keyword: 0 (none) or a finite c > 0; returns it as a float."""
    if isinstance(softcap, bool) or not isinstance(softcap, (int, float)):
        raise TypeError(f"softcap: expected a float, got {type(softcap).__name__}")
    if not math.isfinite(softcap) or softcap < 0:
        raise ValueError(f"softcap={softcap!r}: must be a finite number >= 0 (0: none; c > 0 caps each score "
                         "to c * tanh(score / c))")
    if softcap:
        _float32_holds("softcap", softcap)
    return float(softcap)


def check_sinks(sinks, query):
    """The sinks keyword against query [B, H, N, D] (checked): None, or a floating tensor of H
    logits, one a query head, on query's device. Returns it as the kernels read it: contiguous,
    float32 (float64 for a float64 query), a differentiable conversion of the caller's tensor."""
    if sinks is None:
        return None
    if not _is_tensor(sinks):
        raise TypeError(f"sinks: expected a torch.Tensor of {query.shape[1]} logits (one a query head) or None, "
                        f"got {type(sinks).__name__}")
    if not sinks.is_floating_point():
        raise TypeError(f"sinks: dtype {sinks.dtype} is not a floating type")
    if tuple(sinks.shape) != (query.shape[1],):
        raise ValueError(f"sinks: expected shape ({query.shape[1]},) (one logit a query head), got "
                         f"{tuple(sinks.shape)}")
    if sinks.device != query.device:
        raise ValueError(f"sinks: on {sinks.device}, query on {query.device}; they must share a device")
    import torch
    want = torch.float64 if query.dtype == torch.float64 else torch.float32
    return sinks.to(want).contiguous()


def leading_dims(q, k, v, enable_gqa=False):
    """The dimensions before [seqlen, head_dim] that query, key and value share (SDPA's
    [..., N, D] tensors), query's; with enable_gqa the heads (dimension -3) may differ, and
    _check_each checks them. Raises TypeError for a non-tensor, ValueError for a rank below 2 or
    leading dimensions that differ."""
    for name, t in zip(NAMES, (q, k, v)):
        if not _is_tensor(t):
            raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
    for name, t in zip(NAMES, (q, k, v)):
        if t.dim() < 2:
            raise ValueError(f"{name}: expected at least 2 dimensions [..., seqlen, head_dim], got shape "
                             f"{tuple(t.shape)}")
    lead = tuple(q.shape[:-2])
    skip = 3 if enable_gqa else 2   # the dimensions at the end that may differ
    for name, t in zip(NAMES[1:], (k, v)):
        if t.dim() != q.dim() or tuple(t.shape[:-skip]) != tuple(q.shape[:-skip]):
            raise ValueError(f"{name}: leading dimensions {tuple(t.shape[:-2])} differ from query's {lead} "
                             f"(shapes {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)})")
    return lead


def check_tensors(q, k, v, enable_gqa=False):
    """Types, shapes, dtypes, devices and layout of query, key and value; returns the ft dtype code.
    With enable_gqa, key and value may have fewer heads than query, dividing them (grouped-query
    attention). Raises TypeError for a non-tensor or an unsupported/mixed dtype, ValueError for
    the rest."""
    code = _passes(q, k, v, enable_gqa)
    return code if code is not None else _check_each(q, k, v, enable_gqa)


# Classes whose every instance has the tensor interface (the class itself has each attribute, as
# torch.Tensor does), and dtype objects already mapped to their code: both learnt on first sight.
_TENSOR_CLASSES = set()
_DTYPE_CODES = {}


def _tensor_class(cls):
    if cls not in _TENSOR_CLASSES and all(hasattr(cls, a) for a in _ATTRS):
        _TENSOR_CLASSES.add(cls)
    return cls in _TENSOR_CLASSES


def _passes(q, k, v, enable_gqa):
    """The dtype code when query, key and value pass every check of _check_each, else None (then
    _check_each finds and names the problem). The same conditions, each attribute read once and
    nothing formatted: this runs on every call."""
    try:
        tc = _TENSOR_CLASSES
        if type(q) not in tc or type(k) not in tc or type(v) not in tc:
            if not (_tensor_class(type(q)) and _tensor_class(type(k)) and _tensor_class(type(v))):
                return None
        dtype = q.dtype
        if k.dtype is not dtype or v.dtype is not dtype:
            return None
        code = _DTYPE_CODES.get(dtype)
        if code is None:
            code = DTYPES.get(str(dtype))
            if code is None:
                return None
            _DTYPE_CODES[dtype] = code
        if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
            return None
        (b, h, nq, d), (bk, hk, nk, dk), (bv, hv, nv, dv) = q.shape, k.shape, v.shape
        if bk != b or bv != b or hv != hk or nv != nk or dk != d:
            return None
        if hk != h and not (enable_gqa and hk and h % hk == 0):
            return None
        if not (0 < d <= HEAD_DIM_MAX and 0 < dv <= HEAD_DIM_MAX) or 0 in (b, h, nq, nk):
            return None
        if q.stride()[3] != 1 or k.stride()[3] != 1 or v.stride()[3] != 1:
            return None
        dev_q, dev_k, dev_v = q.device, k.device, v.device
        if dev_q.type != "cuda" or dev_k.type != "cuda" or dev_v.type != "cuda" or not dev_q == dev_k == dev_v:
            return None
        return code
    except Exception:   # whatever it is, _check_each meets it too and reports it
        return None


def _check_each(q, k, v, enable_gqa):
    """check_tensors one condition at a time, raising with the first failure's message."""
    for name, t in zip(NAMES, (q, k, v)):
        if not _is_tensor(t):
            raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
    for name, t in zip(NAMES, (q, k, v)):
        if str(t.dtype) not in DTYPES:
            raise TypeError(f"{name}: dtype {t.dtype} is not supported (float64, float32, float16, bfloat16)")
    if not (q.dtype == k.dtype == v.dtype):
        raise TypeError(f"query, key, value must share one dtype; got {q.dtype}, {k.dtype}, {v.dtype}")
    for name, t in zip(NAMES, (q, k, v)):
        if t.dim() != 4:
            raise ValueError(f"{name}: expected 4 dimensions [batch, heads, seqlen, head_dim], got shape "
                             f"{tuple(t.shape)}")
    (b, h, nq, d), (bk, hk, nk, dk), (bv, hv, nv, dv) = (tuple(t.shape) for t in (q, k, v))
    if (bk, bv) != (b, b):
        raise ValueError(f"batch: query has {b}, key {bk}, value {bv}; they must match")
    if hv != hk:
        raise ValueError(f"heads: key has {hk}, value {hv}; they must match")
    if hk != h and not enable_gqa:
        raise ValueError(f"heads: query has {h}, key and value {hk}; they must match, or pass enable_gqa=True for "
                         "grouped-query attention")
    if hk != h and (hk == 0 or h % hk):
        raise ValueError(f"heads: query has {h}, key and value {hk}; with enable_gqa the query heads must be a "
                         "multiple of the key/value heads")
    if nv != nk:
        raise ValueError(f"value: seqlen {nv} differs from key's {nk}")
    if dk != d:
        raise ValueError(f"key: head_dim {dk} differs from query's {d}")
    for name, dim in (("query", d), ("value", dv)):
        if dim > HEAD_DIM_MAX:
            raise ValueError(f"{name}: head_dim={dim} is not supported (1 to {HEAD_DIM_MAX})")
    for name, t in zip(NAMES, (q, k, v)):
        if 0 in tuple(t.shape):
            raise ValueError(f"{name}: empty tensor of shape {tuple(t.shape)}")
        if t.stride()[3] != 1:
            raise ValueError(f"{name}: the last dimension must be contiguous (stride 1), got strides {t.stride()}; "
                             "call .contiguous() first")
    devices = [t.device for t in (q, k, v)]
    for name, dev in zip(NAMES, devices):
        if getattr(dev, "type", None) != "cuda":
            raise ValueError(f"{name}: on device {dev}; flashtune runs on CUDA tensors")
    if not (devices[0] == devices[1] == devices[2]):
        raise ValueError(f"query, key, value are on different devices: {devices[0]}, {devices[1]}, {devices[2]}")
    return DTYPES[str(q.dtype)]


VARLEN_NAMES = ("q", "k", "v")


def check_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k):
    """attention_varlen's packed tensors and lengths, as far as they can be checked without reading
    the GPU: q [total_q, H, D], k [total_k, Hk, D], v [total_k, Hk, Dv] (Hk dividing H); the prefix
    sums int32 vectors of one length >= 2 on q's device; the longest lengths ints >= 1 (below 2^31
    together). Returns the batch (the sequences). The dtypes, devices and layouts are check_tensors'
    on the [1, H, total, D] views. Raises TypeError/ValueError naming the argument."""
    for name, t in zip(VARLEN_NAMES, (q, k, v)):
        if not _is_tensor(t):
            raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
        if t.dim() != 3:
            raise ValueError(f"{name}: expected 3 dimensions [total, heads, head_dim] (sequences packed one after "
                             f"another), got shape {tuple(t.shape)}")
    (nq, h, d), (nk, hk, dk), (nv, hv, dv) = (tuple(t.shape) for t in (q, k, v))
    if hv != hk or nv != nk:
        raise ValueError(f"v: shape {tuple(v.shape)} must have k's rows and heads ({nk}, {hk})")
    if dk != d:
        raise ValueError(f"k: head_dim {dk} differs from q's {d}")
    if hk == 0 or h % hk:
        raise ValueError(f"heads: q has {h}, k and v {hk}; q's must be a multiple of k's (grouped-query attention)")
    sums = []
    for name, t in (("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k)):
        if not _is_tensor(t):
            raise TypeError(f"{name}: expected a torch.Tensor of int32, got {type(t).__name__}")
        if str(t.dtype) != "torch.int32":
            raise TypeError(f"{name}: dtype {t.dtype}; expected torch.int32 (batch + 1 prefix sums)")
        if t.dim() != 1 or t.shape[0] < 2:
            raise ValueError(f"{name}: expected a vector of batch + 1 >= 2 prefix sums, got shape {tuple(t.shape)}")
        if t.device != q.device:
            raise ValueError(f"{name}: on device {t.device}, q on {q.device}; they must be on the same device")
        if t.stride()[0] != 1:
            raise ValueError(f"{name}: must be contiguous, got stride {t.stride()}")
        sums.append(t.shape[0])
    if sums[0] != sums[1]:
        raise ValueError(f"cu_seqlens_q has {sums[0]} prefix sums, cu_seqlens_k {sums[1]}: both are batch + 1")
    longest = []
    for name, x in (("max_seqlen_q", max_seqlen_q), ("max_seqlen_k", max_seqlen_k)):
        if isinstance(x, bool):
            raise TypeError(f"{name}: {x!r} is a bool; expected an int >= 1")
        try:
            x = operator.index(x)
        except TypeError:
            raise TypeError(f"{name}: expected an int >= 1, got {type(x).__name__}") from None
        if x < 1 or x > _INT_MAX:
            raise ValueError(f"{name}={x}: must be at least 1 (the longest sequence) and below 2^31")
        longest.append(x)
    if longest[0] + longest[1] > _INT_MAX:
        raise ValueError(f"max_seqlen_q={longest[0]} + max_seqlen_k={longest[1]} must be below 2^31")
    return sums[0] - 1
