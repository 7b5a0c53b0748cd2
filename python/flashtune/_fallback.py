"""What flashtune.attention does with a call its kernels cannot run: PyTorch's own
scaled_dot_product_attention runs it, with a warning naming the reason once per reason, so that
flashtune can replace SDPA everywhere; in strict mode (``strict=True``, or FLASHTUNE_STRICT=1 in the
environment) the call raises instead. A call that also asks for what only flashtune does (a
window, a bottom-right diagonal, a softcap) cannot be handed over and raises."""
import os
import warnings

from ._checks import DTYPES, HEAD_DIM_MAX

_warned = set()


def option_reason(attn_mask, dropout_p):
    """Why SDPA must run a call with these, in words, or None."""
    if attn_mask is not None:
        return "attn_mask is given (flashtune takes is_causal and windows, not an explicit mask)"
    if dropout_p != 0.0:
        return f"dropout_p={dropout_p!r} (flashtune does not implement dropout)"
    return None


def tensor_reason(query, key, value):
    """Why SDPA must run a call on these tensors (a device, a dtype, a head dim the kernels do not
    take), or None: then check_tensors names what is wrong with them. Asked only of tensors that
    the quick check (_checks._passes) turned down."""
    try:
        tensors = (query, key, value)
        device = query.device
        if key.device != device or value.device != device:
            return None   # tensors on different devices: an error, for SDPA too
        if getattr(device, "type", None) != "cuda":
            return f"the tensors are on {device} (flashtune runs on CUDA tensors)"
        for t in tensors:
            if str(t.dtype) not in DTYPES:
                return f"dtype {t.dtype} (flashtune takes float64, float32, float16 and bfloat16)"
        if query.shape[-1] > HEAD_DIM_MAX or value.shape[-1] > HEAD_DIM_MAX:
            return f"a head dim above {HEAD_DIM_MAX} ({query.shape[-1]}, {value.shape[-1]})"
    except (AttributeError, IndexError, TypeError):   # not tensors: check_tensors says so
        return None
    return None


def strict(flag):
    """Whether a fallback is an error: the call's strict=, else FLASHTUNE_STRICT."""
    if flag is not None:
        if not isinstance(flag, bool):
            raise TypeError(f"strict: expected True, False or None, got {type(flag).__name__}")
        return flag
    return os.environ.get("FLASHTUNE_STRICT", "") not in ("", "0")


def empty_result(query, key, value, causal, scale, enable_gqa):
    """O of a call with no row to compute (_checks.no_rows), which SDPA returns empty: its own
    result, so shapes, dtypes and autograd are SDPA's; no warning, in any mode (nothing runs)."""
    import torch
    kw = {"enable_gqa": True} if enable_gqa else {}
    return torch.nn.functional.scaled_dot_product_attention(query, key, value, is_causal=causal, scale=scale, **kw)


def run_sdpa(why, is_strict, flashtune_only, query, key, value, attn_mask, dropout_p, causal, scale, enable_gqa):
    """SDPA's result for a call flashtune cannot run (why), or the error strict mode or a
    flashtune-only option (flashtune_only: its name, or None) makes of it."""
    if flashtune_only:
        raise ValueError(f"flashtune cannot run this call ({why}) and cannot hand it to "
                         f"scaled_dot_product_attention, which has no {flashtune_only}")
    if is_strict:
        raise ValueError(f"flashtune cannot run this call: {why} (strict mode: FLASHTUNE_STRICT or strict=True; "
                         "without it the call runs scaled_dot_product_attention)")
    if why not in _warned:
        _warned.add(why)
        warnings.warn(f"flashtune.attention: {why}; running torch.nn.functional.scaled_dot_product_attention "
                      "instead (warned once per reason)", RuntimeWarning, stacklevel=3)
    import torch
    kw = {"enable_gqa": True} if enable_gqa else {}
    return torch.nn.functional.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask,
                                                            dropout_p=dropout_p, is_causal=causal, scale=scale, **kw)
