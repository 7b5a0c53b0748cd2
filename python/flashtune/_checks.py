"""Argument checks of flashtune.attention, made before anything touches the GPU.

Written against the tensor interface only (``dim()``, ``shape``, ``stride()``, ``dtype``,
``device``), so they run, and are tested, on a machine without a GPU or without PyTorch."""
import math

HEAD_DIMS = (32, 64, 96, 128, 256)
# torch dtype name -> ft_dtype code (runtime/include/flashtune.h)
DTYPES = {"torch.float32": 0, "torch.float16": 1, "torch.bfloat16": 2, "torch.float64": 3}
NAMES = ("query", "key", "value")


def _is_tensor(x):
    return all(hasattr(x, a) for a in ("shape", "stride", "dtype", "device", "data_ptr", "dim"))


def check_options(attn_mask, dropout_p, is_causal, causal, scale, enable_gqa):
    """The keyword arguments; returns (causal, scale) resolved."""
    if attn_mask is not None:
        raise ValueError("attn_mask: flashtune supports no explicit mask (use is_causal=True for a causal one); "
                         f"got a {type(attn_mask).__name__}")
    if dropout_p != 0.0:
        raise ValueError(f"dropout_p={dropout_p!r}: flashtune does not implement dropout; pass 0.0")
    if enable_gqa:
        raise ValueError("enable_gqa=True: grouped-query attention is not supported; repeat key/value heads first")
    if causal is not None and bool(causal) != bool(is_causal) and is_causal:
        raise ValueError(f"causal={causal!r} and is_causal={is_causal!r} disagree; give one of them")
    causal = bool(is_causal) if causal is None else bool(causal)
    if scale is not None:
        if isinstance(scale, bool) or not isinstance(scale, (int, float)):
            raise TypeError(f"scale: expected a float or None, got {type(scale).__name__}")
        if not math.isfinite(scale) or scale <= 0:
            raise ValueError(f"scale={scale!r}: must be a finite number > 0 (None means 1/sqrt(head_dim))")
    return causal, scale


def check_tensors(q, k, v):
    """Types, shapes, dtypes, devices and layout of query, key and value; returns the ft dtype code.
    Raises TypeError for a non-tensor or an unsupported/mixed dtype, ValueError for the rest."""
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
    if (hk, hv) != (h, h):
        raise ValueError(f"heads: query has {h}, key {hk}, value {hv}; they must match (no grouped-query attention)")
    if nv != nk:
        raise ValueError(f"value: seqlen {nv} differs from key's {nk}")
    if dk != d:
        raise ValueError(f"key: head_dim {dk} differs from query's {d}")
    for name, dim in (("query", d), ("value", dv)):
        if dim not in HEAD_DIMS:
            raise ValueError(f"{name}: head_dim={dim} is not supported ({', '.join(map(str, HEAD_DIMS))})")
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
