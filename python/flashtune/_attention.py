"""flashtune.attention: a torch.autograd.Function over libflashtune's forward and backward."""
import ctypes
import struct

from . import _fallback, _library, _ops, _workspace
from ._checks import (HEAD_DIM_MAX, NO_MASK, _passes, check_allow_tf32, check_deterministic, check_mask,
                      check_options, check_sinks, check_softcap, check_tensors, leading_dims, no_rows)


def _desc(q, k, v, o, dtype, causal, scale, mask=NO_MASK, softcap=0.0, sinks=0, allow_tf32=False):
    """The AttentionDesc of a call; mask: (causal_align, window, window_left, window_right); sinks:
    the sinks' device address (0: none); allow_tf32: float32 products may round to TF32."""
    d = _library.AttentionDesc()
    d.batch, d.heads, d.seqlen_q, d.head_dim = q.shape
    d.seqlen_k, d.head_dim_v = k.shape[2], v.shape[3]
    d.dtype, d.causal = dtype, int(causal)
    d.softmax_scale = float(scale) if scale is not None else 0.0
    for field, t in (("q_stride", q), ("k_stride", k), ("v_stride", v), ("o_stride", o)):
        getattr(d, field)[:] = t.stride()[:3]
    d.causal_align, d.window, d.window_left, d.window_right = mask
    d.heads_k = k.shape[1]
    d.softcap = softcap
    d.sinks = sinks
    d.allow_tf32 = int(allow_tf32)
    return d


def address(t):
    """t's device address, or 0 for None: a desc's optional pointer (the sinks)."""
    return t.data_ptr() if t is not None else 0


def _four_dims(q, k, v):
    """1 when query, key and value are all [B, H, N, D] (the kernels' shape), or when something is
    not a tensor at all (check_tensors then says what)."""
    try:
        return q.dim() == 4 and k.dim() == 4 and v.dim() == 4
    except Exception:
        return True


def _as_4d(t, enable_gqa=False):
    """t [..., N, D] seen as [B, H, N, D]: rank 2 as one batch of one head, rank 3 [B, N, D] as one
    head each (with enable_gqa as one batch of B heads: SDPA groups the heads along dimension -3),
    rank 5 and more with the dimensions before the heads as the batch (a view where the strides
    allow, else a copy; gradients flow back through either)."""
    rank = t.dim()
    if rank == 3:
        return t.unsqueeze(0) if enable_gqa else t.unsqueeze(1)
    if rank == 2:
        return t.unsqueeze(0).unsqueeze(0)
    return t.reshape((-1,) + tuple(t.shape[-3:]))


def _padded_to_8(q, k, v, dtype):
    """f16 and bf16 kernels read rows in 16-byte pieces, so their head dims are multiples of 8:
    query, key and value with theirs padded with zeros to the next one (torch pads and, backward,
    cuts the gradients back), or None when they are already. Zero columns add nothing to Q K^T and
    make zero columns of O."""
    d, dv = q.shape[3], v.shape[3]
    if dtype not in (1, 2) or (d % 8 == 0 and dv % 8 == 0):
        return None
    import torch
    F = torch.nn.functional
    pd, pdv = -d % 8, -dv % 8
    return F.pad(q, (0, pd)), F.pad(k, (0, pd)), F.pad(v, (0, pdv))


def _operand(t, half):
    """t, its shape, strides and data pointer, each read once. Half (f16/bf16) kernels need
    16-byte aligned data and strides that are multiples of 8 elements along dimensions longer than
    1; a half t without both is copied contiguous first."""
    n, s, p = t.shape, t.stride(), t.data_ptr()
    if half and not (p % 16 == 0 and (s[0] % 8 == 0 or n[0] <= 1) and (s[1] % 8 == 0 or n[1] <= 1) and
                     (s[2] % 8 == 0 or n[2] <= 1)):
        t = t.contiguous()
        s, p = t.stride(), t.data_ptr()
    return t, n, s, p


# Bound when torch is first needed (_Attention.get): the Function's apply, and how a call makes
# the tensors' device current and finds its stream. With torch >= 2.1 these are the C calls
# that `with torch.cuda.device(d)` and torch.cuda.current_stream(d).cuda_stream make, without the
# context manager and the Stream object each of those builds per call.
_apply = None
_enter_device = _leave_device = _current_stream = None
_torch = _grad_enabled = None
# The C hot path's entry points (_library.hotpath, bound to torch here), or None: attention()'s
# plain no-grad call, forward_call's checks, allocations and library call, and run_backward's
# allocations and library call, in one C call each.
_hot_attention = _hot_forward = _hot_backward = None


def _bind_torch(torch):
    global _enter_device, _leave_device, _current_stream, _torch, _grad_enabled
    _torch, _grad_enabled = torch, torch.is_grad_enabled
    cuda = torch.cuda
    if hasattr(cuda, "_exchange_device") and hasattr(cuda, "_maybe_exchange_device") and \
            hasattr(torch._C, "_cuda_getCurrentRawStream"):
        _enter_device, _leave_device = cuda._exchange_device, cuda._maybe_exchange_device
        _current_stream = torch._C._cuda_getCurrentRawStream
    else:   # an older torch: its context manager, entered and left by hand
        def enter(index):
            guard = cuda.device(index)
            guard.__enter__()
            return guard

        _enter_device, _leave_device = enter, lambda guard: guard.__exit__(None, None, None)
        _current_stream = lambda index: cuda.current_stream(index).cuda_stream
    _bind_hotpath(torch)


def _bind_hotpath(torch):
    global _hot_attention, _hot_forward, _hot_backward
    _library.library()   # loaded, and with it the hot path
    hot = _library.hotpath
    if hot is None or not hasattr(torch, "uint8") or not hasattr(torch.Tensor, "new_empty"):
        _hot_attention = _hot_forward = _hot_backward = None
        return
    hot.bind_torch(torch.Tensor, (torch.float32, torch.float16, torch.bfloat16, torch.float64), torch.uint8,
                   _enter_device, _leave_device, _current_stream, torch.is_grad_enabled, HEAD_DIM_MAX)
    _hot_attention, _hot_forward = hot.attention, hot.forward
    _hot_backward = hot.backward if hasattr(torch.Tensor, "new_empty_strided") else None


def run_forward(torch, handle, desc, device, qp, kp, vp, o, lse):
    """libflashtune's forward of desc on device's current stream, its workspace (if its kernel keeps
    one) from the caching allocator: the forward of attention(), attention_varlen() and their ops."""
    index = device.index
    prev = _enter_device(index)
    try:
        nbytes = _workspace.forward_bytes(handle, desc, index)
        ws = wp = None
        if nbytes:   # most kernels keep none
            ws, wp = _workspace.allocate(torch, nbytes, device)
        status = _library.forward(handle, desc, qp, kp, vp, o.data_ptr(), lse.data_ptr(), wp, nbytes,
                                  _current_stream(index))
    finally:
        _leave_device(prev)
    if status:
        _library.check(status, handle)


def run_backward(torch, desc, device, q, k, v, o, lse, do, ost, shapes, deterministic, dsinks=None):
    """dQ, dK, dV through libflashtune's backward of desc (the forward's: its strides are the saved
    tensors'), laid out as shapes' ((shape, strides) of q, k and v), on device's current stream, the
    workspace from the caching allocator: the backward of attention(), attention_varlen() and their
    ops. deterministic None follows torch.use_deterministic_algorithms as it is now. dsinks: where
    the sinks' gradient goes ([H], the sinks' type), for a desc with sinks."""
    handle = _library.handle()
    if deterministic is None:
        deterministic = torch.are_deterministic_algorithms_enabled()
    if deterministic:
        desc = _library.with_deterministic(desc)
    if dsinks is not None:
        desc = _library.with_dsinks(desc, dsinks.data_ptr())
    nbytes = _workspace.backward_bytes(handle, desc)
    if _hot_backward is not None:   # the allocations, the device switch and the call in one C call
        out = _hot_backward(handle.value, desc, nbytes, q, k, v, o, lse, do, ost, shapes)
        if out is not None:
            if out.__class__ is int:
                _library.check(out, handle)
            return out
    if do.stride() != ost:   # dO is read with O's strides: a copy laid out as O
        do = torch.empty_strided(o.shape, ost, dtype=o.dtype, device=device).copy_(do)
    dtype = q.dtype   # k's and v's too (checked)
    (qn, qs), (kn, ks), (vn, vs) = shapes
    dq = torch.empty_strided(qn, qs, dtype=dtype, device=device)
    dk = torch.empty_strided(kn, ks, dtype=dtype, device=device)
    dv = torch.empty_strided(vn, vs, dtype=dtype, device=device)
    index = device.index
    prev = _enter_device(index)
    try:
        ws, wp = _workspace.allocate(torch, nbytes, device)
        status = _library.backward(handle, desc, q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(),
                                   lse.data_ptr(), do.data_ptr(), dq.data_ptr(), dk.data_ptr(), dv.data_ptr(),
                                   wp, nbytes, _current_stream(index))
    finally:
        _leave_device(prev)
    if status:
        _library.check(status, handle)
    return dq, dk, dv


def gradients(torch, ctx, do, saved, sinks=None):
    """dQ, dK, dV for a Function's forward that saved (q, k, v, o, lse, ...) and set ctx.ft (its
    desc, device and the operands' shapes and strides) and ctx.deterministic: the backward of
    attention() and of attention_varlen(). With sinks (the forward's, saved: the desc holds their
    address) also their gradient, last."""
    q, k, v, o, lse = saved[:5]
    desc, device, _, qsh, ksh, vsh, ost = ctx.ft
    dsinks = torch.empty_like(sinks) if sinks is not None else None
    grads = run_backward(torch, desc, device, q, k, v, o, lse, do, ost, (qsh, ksh, vsh), ctx.deterministic, dsinks)
    return grads if sinks is None else tuple(grads) + (dsinks,)


def forward_call(torch, q, k, v, dtype, causal, scale, mask, softcap, sinks=None, allow_tf32=False):
    """The forward of query, key, value [B, H, N, D] (checked; dtype their ft code, mask the desc's
    (causal_align, window, window_left, window_right); sinks None or checked, check_sinks; allow_tf32:
    float32 products may round to TF32) through libflashtune. Returns the operands the kernels read
    (a half tensor copied where it must be), O, L, the desc, the operands' (shape, strides) and O's
    strides: what the backward needs."""
    handle = _library.handle()
    if _hot_forward is not None and not softcap and sinks is None and not allow_tf32:
        # all of it in one C call (the mask checked by check_mask, or by the library)
        out = _hot_forward(handle.value, q, k, v, causal, scale, True, mask)   # (heads already checked)
        if out is not None:
            if out.__class__ is int:
                _library.check(out, handle)
            return out
    half = dtype == 1 or dtype == 2   # f16, bf16
    q, (b, h, nq, d), qs, qp = _operand(q, half)
    k, (_, hk, nk, _), ks, kp = _operand(k, half)
    v, (_, _, _, dv), vs, vp = _operand(v, half)
    device = q.device
    o = new_output(torch, qs, (b, h, nq, dv), q.dtype, device)
    lse = torch.empty((b, h, nq), dtype=torch.float64 if dtype == 3 else torch.float32, device=device)
    ost = o.stride()
    desc = desc_of(q, k, v, o, (b, h, nq, nk, d, dv, hk), (qs, ks, vs, ost), dtype, causal, scale, mask, softcap,
                   address(sinks), allow_tf32)
    run_forward(torch, handle, desc, device, qp, kp, vp, o, lse)
    return q, k, v, o, lse, desc, ((q.shape, qs), (k.shape, ks), (v.shape, vs)), ost


def new_output(torch, qs, shape, dtype, device):
    """An empty O of shape [B, H, Nq, Dv] laid out in the query's order, as SDPA's: [B, Nq, H, Dv] in
    memory when query's heads lie closer than its rows (a view of a projection's [B, N, H, D]
    output), else [B, H, Nq, Dv]. Then the usual `o.transpose(1, 2).reshape(B, N, H * Dv)` is a
    view, not a copy, and its gradient comes back in O's own strides (the backward copies a dO
    laid out otherwise). The fake implementations lay out theirs here too."""
    b, h, nq, dv = shape
    if qs[1] < qs[2] and h > 1 and nq > 1:
        return torch.empty((b, nq, h, dv), dtype=dtype, device=device).transpose(1, 2)
    return torch.empty(shape, dtype=dtype, device=device)


def desc_of(q, k, v, o, sizes, strides, dtype, causal, scale, mask, softcap, sinks=0, allow_tf32=False):
    """The packed desc of operands q, k, v and output o: sizes (B, H, Nq, Nk, D, Dv, Hk) and
    strides (q's, k's, v's, o's) as read from them; sinks the sinks' address (0: none)."""
    b, h, nq, nk, d, dv, hk = sizes
    qs, ks, vs, ost = strides
    try:   # the desc in one struct.pack
        return _library.DESC.pack(_library.DESC_SIZE, b, h, nq, nk, d, dv, dtype, causal,
                                  float(scale) if scale is not None else 0.0,
                                  qs[0], qs[1], qs[2], ks[0], ks[1], ks[2],
                                  vs[0], vs[1], vs[2], ost[0], ost[1], ost[2], *mask, 0, hk,
                                  softcap, 0, 0, 0, 0, 0, sinks, 0, int(allow_tf32), 0)
    except (struct.error, OverflowError):   # a value beyond its C field: as ctypes stores it
        return bytes(_desc(q, k, v, o, dtype, causal, scale, mask, softcap, sinks, allow_tf32))


class _Attention:
    """Holder of the autograd.Function class, defined when torch is first needed."""
    cls = None

    @classmethod
    def get(cls):
        global _apply
        if cls.cls is None:
            import torch
            _bind_torch(torch)

            class FlashtuneAttention(torch.autograd.Function):
                @staticmethod
                def forward(ctx, q, k, v, options, sinks=None):
                    dtype, causal, scale, mask, deterministic, softcap, allow_tf32 = options
                    q, k, v, o, lse, desc, shapes, ost = forward_call(torch, q, k, v, dtype, causal, scale, mask,
                                                                      softcap, sinks, allow_tf32)
                    # (the desc holds the sinks' address: they live as long as it)
                    ctx.save_for_backward(q, k, v, o, lse, *(() if sinks is None else (sinks,)))
                    # the desc, which holds the saved tensors' strides, and what allocates the gradients
                    ctx.ft = (desc, q.device, q.device.index) + shapes + (ost,)
                    ctx.deterministic = deterministic
                    return o

                @staticmethod
                def backward(ctx, do):
                    saved = ctx.saved_tensors
                    if len(ctx.needs_input_grad) == 4:   # applied without sinks
                        return gradients(torch, ctx, do, saved) + (None,)
                    grads = gradients(torch, ctx, do, saved, saved[5] if ctx.needs_input_grad[4] else None)
                    return tuple(grads[:3]) + (None, grads[3] if len(grads) > 3 else None)

            cls.cls = FlashtuneAttention
            _apply = FlashtuneAttention.apply
        return cls.cls


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False, *,
              causal=None, causal_align="top_left", window_size=None, deterministic=None, softcap=0.0, sinks=None,
              strict=None, allow_tf32=False):
    """Scaled dot-product attention with flashtune's tuned kernels, differentiable.

    The arguments mean what they mean in ``torch.nn.functional.scaled_dot_product_attention``, so
    switching is one line: query [B, H, Nq, D], key [B, H, Nk, D], value [B, H, Nk, Dv], or any
    strided view whose last dimension is contiguous (e.g. a [B, N, H, D] tensor transposed); or,
    as SDPA takes them, [..., Nq, D], [..., Nk, D], [..., Nk, Dv] of any rank >= 2 with the same
    leading dimensions (a [B, N, D] tensor has one head), the output shaped [..., Nq, Dv];
    float64, float32, float16 or bfloat16, all on the same CUDA device; runs on the current
    stream. ``is_causal`` (or its alias ``causal``) masks keys after the query's position;
    ``scale`` defaults to 1/sqrt(D). Returns O [B, H, Nq, Dv] (or [..., Nq, Dv]). Head dims D and Dv:
    any from 1 to 256 (each runs on the kernels of the next compiled size, 32, 64, 96, 128, 192 or
    256, its padding never read from memory; in float16 and bfloat16 a head dim that is not a
    multiple of 8 is first copied padded with zeros to one).
    ``enable_gqa``: key and value may have fewer heads Hk than query, H a multiple of Hk
    (grouped-query attention; multi-query with Hk = 1): query head h reads key/value head
    h // (H // Hk), as SDPA's enable_gqa, without repeating them; their gradients sum over the
    query heads that read them.

    What the kernels cannot run (an ``attn_mask``, ``dropout_p`` > 0, tensors not on a CUDA
    device, another dtype, a head dim above 256) runs through
    ``torch.nn.functional.scaled_dot_product_attention`` instead, with a RuntimeWarning naming the
    reason, once per reason; ``strict=True`` (or FLASHTUNE_STRICT=1 in the environment) makes it a
    ValueError instead. A call that also asks for a window, a bottom-right diagonal, a softcap or
    sinks, which SDPA does not have, raises ValueError.

    Under torch.compile (fullgraph too) and torch.export the call is two custom operators,
    ``flashtune::attention_forward`` and ``flashtune::attention_backward``, with fake
    implementations; eager calls skip their dispatch (less host time a call). Forward and backward
    take their workspace from PyTorch's caching allocator, so both may be captured into a CUDA
    graph (torch.cuda.graph) once the problem has run eagerly.

    Masks beyond SDPA's (keywords only, as FlashAttention names them):
    ``causal_align``: where query i's diagonal sits: "top_left" (key i, PyTorch's is_causal) or
    "bottom_right" (key i + Nk - Nq: the last query meets the last key, as with a KV cache).
    ``window_size``: (left, right), a local window: query i sees the keys from left before its
    diagonal to right after it, -1 for no limit on that side (None: no window). With is_causal
    the right side must be 0 or -1. A query that sees no key at all (bottom-right with Nq > Nk,
    or a window) gets O = 0 and a zero gradient.

    ``softcap``: c > 0 caps each score S (already scaled) to c * tanh(S / c) before the softmax,
    as Gemma 2 does (FlashAttention's softcap); 0 (the default) or None leaves the scores as they
    are.

    ``sinks``: attention sinks as gpt-oss learns them: a tensor of H logits, one a query head, on
    the query's device, that joins every row's softmax as a score with no value (a row's weights
    then sum to less than 1; a row that sees no key gets O = 0). Differentiable: its gradient is
    summed over the batch and the rows. None (the default): no sinks. The kernels read them as
    float32 (float64 for float64 inputs).

    ``allow_tf32``: float32 inputs only (other dtypes ignore it): True lets the products of the
    forward and the backward round their operands to TF32 (a 10-bit mantissa: one tensor-core
    product instead of three, about 3e-4 relative error), as ``torch.backends.cuda.matmul.allow_tf32`` allows PyTorch's matmuls;
    False (the default, whatever that flag says) keeps float32's accuracy; under torch.compile and
    export too (the custom operators carry it).

    ``deterministic``: True makes the backward bitwise repeatable run to run (its dQ is added in a
    fixed order, at some cost in speed); False takes the fastest kernel, whose dQ may differ in
    the last bits; None (the default) follows ``torch.use_deterministic_algorithms`` at the time
    the backward runs. The forward is always deterministic.

    Raises TypeError (not a tensor, unsupported or mixed dtypes, a non-number scale or softcap, a
    causal_align, window_size or deterministic of the wrong type), ValueError (shapes, head dims, layout,
    devices, unsupported options or values: checked before the GPU is touched),
    LibraryNotFound (libflashtune not found: the message lists where it looked) and
    FlashtuneError (a failure inside the library, with its status and message)."""
    if attn_mask is not None or dropout_p != 0.0:
        return _to_sdpa(_fallback.option_reason(attn_mask, dropout_p), query, key, value, attn_mask, dropout_p,
                        is_causal, scale, enable_gqa, causal, causal_align, window_size, softcap, strict, sinks)
    if strict is not None:
        _fallback.strict(strict)   # its type
    hot = _hot_attention
    if hot is not None and causal is None and window_size is None and causal_align == "top_left" and not softcap \
            and sinks is None and allow_tf32 is False and not _ops.compiling():
        # the plain call with nothing to differentiate, checked and run in one C call (None: not that call)
        handle = _library.handle()
        o = hot(handle.value, query, key, value, is_causal, scale, enable_gqa)
        if o is not None:
            if o.__class__ is int:
                _library.check(o, handle)
            return o
    if no_rows(query):   # a batch, heads or queries of 0: the empty O SDPA returns
        causal, scale = check_options(is_causal, causal, scale)
        return _fallback.empty_result(query, key, value, causal, scale, enable_gqa)
    if not _four_dims(query, key, value):   # [..., N, D]: through [B, H, N, D] views, back to the shape
        lead = leading_dims(query, key, value, enable_gqa)
        o = attention(_as_4d(query, enable_gqa), _as_4d(key, enable_gqa), _as_4d(value, enable_gqa), None,
                      0.0, is_causal, scale, enable_gqa, causal=causal, causal_align=causal_align,
                      window_size=window_size, deterministic=deterministic, softcap=softcap, sinks=sinks,
                      allow_tf32=allow_tf32)
        return o.reshape(lead + tuple(o.shape[-2:]))
    causal, scale = check_options(is_causal, causal, scale)
    mask = check_mask(causal, causal_align, window_size)
    deterministic = check_deterministic(deterministic)
    allow_tf32 = check_allow_tf32(allow_tf32)
    softcap = check_softcap(softcap) if softcap else 0.0
    traced = _ops.compiling()
    if traced:   # torch.compile or export: the custom operators (the checks run in their fake implementations)
        dtype = _ops.DTYPE_CODES[query.dtype]
    else:
        dtype = _passes(query, key, value, enable_gqa)
        if dtype is None:   # something the kernels do not take: SDPA's call, or an error naming it
            why = _fallback.tensor_reason(query, key, value)
            if why is not None:
                return _to_sdpa(why, query, key, value, None, 0.0, is_causal, scale, enable_gqa, causal,
                                causal_align, window_size, softcap, strict, sinks)
            dtype = check_tensors(query, key, value, enable_gqa)
    sinks = check_sinks(sinks, query)
    padded = _padded_to_8(query, key, value, dtype)
    if padded is not None:   # the scale stays the head dim's own; O is cut back to value's head dim
        scale = scale if scale is not None else 1.0 / query.shape[3] ** 0.5
        o = attention(*padded, None, 0.0, causal, scale, enable_gqa, causal_align=causal_align,
                      window_size=window_size, deterministic=deterministic, softcap=softcap, sinks=sinks,
                      allow_tf32=allow_tf32)
        return o[..., :value.shape[3]]
    if traced:
        if not enable_gqa and key.shape[1] != query.shape[1]:
            check_tensors(query, key, value, enable_gqa)   # raises, naming the heads
        return _ops.attention(query, key, value, causal, scale, mask, softcap, deterministic, sinks, allow_tf32)
    if _apply is None:
        _Attention.get()
    if not (_grad_enabled() and (query.requires_grad or key.requires_grad or value.requires_grad or
                                 (sinks is not None and sinks.requires_grad))):
        # nothing to differentiate (inference, torch.no_grad): the library call without autograd's
        return forward_call(_torch, query, key, value, dtype, causal, scale, mask, softcap, sinks, allow_tf32)[3]
    # the options travel as one argument: apply's Python part costs per argument
    options = (dtype, causal, scale, mask, deterministic, softcap, allow_tf32)
    return _apply(query, key, value, options) if sinks is None else _apply(query, key, value, options, sinks)


def _to_sdpa(why, query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, causal, causal_align,
             window_size, softcap, strict, sinks=None):
    """A call the kernels cannot run (why), handed to SDPA (_fallback.run_sdpa)."""
    causal, scale = check_options(is_causal, causal, scale)
    only = "window" if window_size is not None else "bottom-right diagonal" if causal_align != "top_left" \
        else "softcap" if softcap else "sinks" if sinks is not None else None
    return _fallback.run_sdpa(why, _fallback.strict(strict), only, query, key, value, attn_mask, dropout_p, causal,
                              scale, enable_gqa)


def describe_choice(query, key, value, is_causal=False, backward=False, *, causal_align="top_left",
                    window_size=None, deterministic=False, enable_gqa=False, softcap=0.0, sinks=None,
                    allow_tf32=False):
    """The kernel libflashtune runs for these tensors and the rule that picked it, as text; the
    keywords as for attention() (deterministic: None counts as False here; sinks: a problem with
    sinks runs kernels compiled with them, so it may be served otherwise)."""
    mask = check_mask(bool(is_causal), causal_align, window_size)
    if not _four_dims(query, key, value):
        leading_dims(query, key, value, enable_gqa)
        query, key, value = _as_4d(query, enable_gqa), _as_4d(key, enable_gqa), _as_4d(value, enable_gqa)
    dtype = check_tensors(query, key, value, enable_gqa)
    padded = _padded_to_8(query, key, value, dtype)
    scale = None
    if padded is not None:   # what attention() runs
        scale = 1.0 / query.shape[3] ** 0.5
        query, key, value = padded
    import torch
    b, h, nq, _ = query.shape
    o = torch.empty((b, h, nq, value.shape[3]), dtype=query.dtype, device="meta")
    sinks = check_sinks(sinks, query)
    d = _desc(query, key, value, o, dtype, is_causal, scale, mask, check_softcap(softcap) if softcap else 0.0,
              address(sinks))
    d.deterministic = int(bool(check_deterministic(deterministic)))
    d.allow_tf32 = int(check_allow_tf32(allow_tf32))
    lib, handle = _library.library(), _library.context()
    buf = ctypes.create_string_buffer(1024)
    _library.check(lib.ft_describe_choice(handle, ctypes.byref(d), int(backward), buf, len(buf)), handle)
    return buf.value.decode()
