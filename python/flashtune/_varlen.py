"""flashtune.attention_varlen: a variable-length batch (FlashAttention's packed layout) through
libflashtune's forward and backward, differentiable.

The packed tensors [total, heads, dim] are handed to the kernels as one batch of one sequence,
[1, heads, total, dim] views (the library addresses a variable-length batch by its head and row
strides alone); the prefix sums say where each sequence's rows are.

The library checks the prefix sums' values by reading them back, which waits for the stream; the
first call with a pair of cu_seqlens tensors pays that, and later calls with the same tensors,
unchanged (torch's version counter moves with every in-place write) and at the same sizes, tell
the library they were checked (the desc's prefix_sums_checked): a model's layers, and each
layer's backward, pass the same ones. Writes torch does not see (another library's kernel into
the tensor's memory, a CUDA graph replayed into it) do not move the counter: there
FLASHTUNE_PREFIX_SUMS=every has every call checked. Inference tensors keep no counter: each call
with them is checked."""
import os
import struct
import weakref

from . import _attention, _library, _ops
from ._checks import (check_allow_tf32, check_deterministic, check_mask, check_options, check_sinks, check_softcap,
                      check_tensors, check_varlen)

_apply = _cls = None
# Prefix sums the library has checked: id(cu_seqlens_q) -> (a weak reference to it, the key of
# what was checked). A handful: a model passes one pair per batch.
_checked = {}
_CHECKED_MAX = 8


def _check_every_call():
    """FLASHTUNE_PREFIX_SUMS: "once" (the default) or "every"; anything else is an error."""
    mode = os.environ.get("FLASHTUNE_PREFIX_SUMS") or "once"
    if mode not in ("once", "every"):
        raise ValueError(f"FLASHTUNE_PREFIX_SUMS={mode!r}: expected 'once' (the default: a pair of cu_seqlens "
                         "tensors checked at its first call) or 'every' (checked at every call)")
    return mode == "every"


def _checked_key(cu_q, cu_k, sizes):
    """What makes a check of these prefix sums hold again: both tensors as they are now (object,
    version, address) and the sizes they were checked against (batch, the longest, the totals);
    None where that cannot be known (an inference tensor has no version counter)."""
    try:
        return (weakref.ref(cu_k), cu_q._version, cu_q.data_ptr(), cu_k._version, cu_k.data_ptr(), sizes)
    except RuntimeError:
        return None


def _vouched(cu_q, cu_k, sizes):
    """True when the library checked these very prefix sums, unchanged, at these sizes."""
    entry = _checked.get(id(cu_q))
    if entry is None or entry[0]() is not cu_q or _check_every_call():
        return False
    key = _checked_key(cu_q, cu_k, sizes)
    return key is not None and entry[1][0]() is cu_k and entry[1][1:] == key[1:]


def _remember_checked(torch, device, cu_q, cu_k, sizes):
    """After a call on device that checked them, or was told they were checked; False while a CUDA
    graph is captured on device's current stream (the library trusts them there, unchecked), or
    where their changes cannot be followed (_checked_key)."""
    with torch.cuda.device(device):
        if torch.cuda.is_current_stream_capturing():
            return False
    key = _checked_key(cu_q, cu_k, sizes)
    if key is None:
        return False
    if len(_checked) >= _CHECKED_MAX:
        _checked.clear()
    _checked[id(cu_q)] = (weakref.ref(cu_q), key)
    return True


def _view4(t):
    """[total, heads, dim] as the [1, heads, total, dim] view the kernels take."""
    return t.unsqueeze(0).transpose(1, 2)


def forward_call(torch, q, k, v, cu_q, cu_k, dtype, causal, scale, mask, softcap, batch, max_q, max_k, sinks=None,
                 allow_tf32=False):
    """The forward of a variable-length batch through libflashtune: q, k, v the [1, heads, total,
    dim] views (checked; dtype their ft code), the prefix sums, the options (sinks: None or
    check_sinks's; allow_tf32: float32 products may round to TF32). Returns the operands
    the kernels read, O (a [1, H, total_q, Dv] view of [total_q, H, Dv]), L [H, total_q], the desc,
    the operands' (shape, strides) and O's strides: what the backward needs."""
    a = _attention
    handle = _library.handle()
    half = dtype == 1 or dtype == 2
    q, (_, h, total_q, d), qs, qp = a._operand(q, half)
    k, (_, hk, total_k, _), ks, kp = a._operand(k, half)
    v, (_, _, _, dv), vs, vp = a._operand(v, half)
    device = q.device
    o = _view4(torch.empty((total_q, h, dv), dtype=q.dtype, device=device))
    lse = torch.empty((h, total_q), dtype=torch.float64 if dtype == 3 else torch.float32, device=device)
    ost = o.stride()
    sizes = (batch, h, max_q, max_k, d, dv, hk, total_q, total_k)
    desc = desc_of(sizes, (qs, ks, vs, ost), cu_q, cu_k, dtype, causal, scale, mask, softcap, a.address(sinks),
                   allow_tf32)
    a.run_forward(torch, handle, desc, device, qp, kp, vp, o, lse)
    vouched = desc[_library.PREFIX_SUMS_CHECKED_AT] != 0   # (then remembered already)
    if not vouched and _remember_checked(torch, device, cu_q, cu_k, sizes[:4] + sizes[7:]):
        desc = _library.with_prefix_sums_checked(desc)   # the backward's desc too
    return q, k, v, o, lse, desc, ((q.shape, qs), (k.shape, ks), (v.shape, vs)), ost


def desc_of(sizes, strides, cu_q, cu_k, dtype, causal, scale, mask, softcap, sinks=0, allow_tf32=False):
    """The packed desc of a variable-length batch: sizes (batch, H, longest q, longest k, D, Dv, Hk,
    total_q, total_k), strides (q's, k's, v's, o's of the [1, H, total, D] views); sinks the
    sinks' address (0: none); allow_tf32 the desc's flag (the backward reads the same desc); the
    prefix sums vouched for where the library checked them before (_vouched)."""
    batch, h, max_q, max_k, d, dv, hk, total_q, total_k = sizes
    qs, ks, vs, ost = strides
    vouched = _vouched(cu_q, cu_k, (batch, h, max_q, max_k, total_q, total_k))
    try:
        return _library.DESC.pack(
            _library.DESC_SIZE, batch, h, max_q, max_k, d, dv, dtype, causal,
            float(scale) if scale is not None else 0.0, qs[0], qs[1], qs[2], ks[0], ks[1], ks[2],
            vs[0], vs[1], vs[2], ost[0], ost[1], ost[2], *mask, 0, hk, softcap, 0, cu_q.data_ptr(),
            cu_k.data_ptr(), total_q, total_k, sinks, 0, int(allow_tf32), int(vouched))
    except (struct.error, OverflowError) as e:   # the checks bound every field; say which failed
        raise ValueError(f"attention_varlen: a size does not fit the C descriptor: {e}") from None


def _function():
    """The autograd.Function, defined when torch is first needed (and its apply bound)."""
    global _apply, _cls
    if _cls is not None:
        return _cls
    import torch
    _attention._Attention.get()   # binds the device and stream calls the Function uses
    a = _attention

    class FlashtuneVarlenAttention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, cu_q, cu_k, options, sinks=None):
            dtype, causal, scale, mask, deterministic, softcap, batch, max_q, max_k, allow_tf32 = options
            q, k, v, o, lse, desc, shapes, ost = forward_call(torch, q, k, v, cu_q, cu_k, dtype, causal, scale, mask,
                                                              softcap, batch, max_q, max_k, sinks, allow_tf32)
            # (the desc holds the sinks' address: they live as long as it)
            ctx.save_for_backward(q, k, v, o, lse, cu_q, cu_k, *(() if sinks is None else (sinks,)))
            ctx.ft = (desc, q.device, q.device.index) + shapes + (ost,)
            ctx.deterministic = deterministic
            return o

        @staticmethod
        def backward(ctx, do):
            saved = ctx.saved_tensors
            if len(ctx.needs_input_grad) == 6:   # applied without sinks
                return a.gradients(torch, ctx, do, saved) + (None, None, None)
            grads = a.gradients(torch, ctx, do, saved, saved[7] if ctx.needs_input_grad[6] else None)
            return tuple(grads[:3]) + (None, None, None, grads[3] if len(grads) > 3 else None)

    _cls, _apply = FlashtuneVarlenAttention, FlashtuneVarlenAttention.apply
    return _cls


def attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, softmax_scale=None,
                     causal=False, *, causal_align="top_left", window_size=None, softcap=0.0, deterministic=None,
                     sinks=None, allow_tf32=False):
    """Attention over a batch of sequences of different lengths, packed one after another, with
    flashtune's kernels, differentiable (FlashAttention's flash_attn_varlen_func layout).

    q [total_q, H, D], k [total_k, Hk, D], v [total_k, Hk, Dv] (Hk dividing H: grouped-query
    attention), the last dimension contiguous; cu_seqlens_q, cu_seqlens_k: int32 tensors of
    batch + 1 prefix sums on q's device (sequence b's queries are rows cu_seqlens_q[b] ..
    cu_seqlens_q[b + 1] - 1, its keys those rows of cu_seqlens_k; a sequence may be empty);
    max_seqlen_q, max_seqlen_k: the longest lengths (no sequence may be longer). Each sequence is
    its own problem: ``causal`` and a ``window_size`` (left, right) place its diagonal by its own
    lengths (``causal_align`` "top_left", or "bottom_right": its last query meets its last key).
    ``softmax_scale`` defaults to 1/sqrt(D); ``softcap``, ``deterministic``, ``sinks`` (H logits,
    one a query head, the same for every sequence) and ``allow_tf32`` (float32: products rounded
    to TF32) as in attention().
    Returns O [total_q, H, Dv]. The library reads the prefix sums back to check them, so the call
    waits for the work queued before it on the current stream (not inside a CUDA graph capture:
    there they are trusted as given); a later call with the same cu_seqlens tensors, not written
    since (their version counters) and with the same sizes, and the backward, do not read them
    again, so they do not wait (FLASHTUNE_PREFIX_SUMS=every: every call reads them, for sums
    written where torch does not see it). Under torch.compile and torch.export the call is two custom
    operators, ``flashtune::attention_varlen_forward`` and ``flashtune::attention_varlen_backward``.

    Raises TypeError or ValueError naming the argument: checked before the GPU is touched, except
    the prefix sums' values, which the library checks (ValueError too) before it launches anything:
    they must start at 0, never decrease, hold no sequence longer than its max_seqlen and end at
    the tensors' rows. FlashtuneError for a failure inside the library."""
    batch = check_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k)
    if softmax_scale is not None:
        _, softmax_scale = check_options(False, None, softmax_scale)
    if not isinstance(causal, bool):
        raise TypeError(f"causal: expected True or False, got {type(causal).__name__}")
    mask = check_mask(causal, causal_align, window_size)
    deterministic = check_deterministic(deterministic)
    softcap = check_softcap(softcap) if softcap else 0.0
    allow_tf32 = check_allow_tf32(allow_tf32)
    q4, k4, v4 = _view4(q), _view4(k), _view4(v)
    traced = _ops.compiling()
    dtype = _ops.DTYPE_CODES[q.dtype] if traced else check_tensors(q4, k4, v4, True)
    sinks = check_sinks(sinks, q4)
    padded = _attention._padded_to_8(q4, k4, v4, dtype)
    if padded is not None:   # the scale stays the head dim's own; O is cut back to value's head dim
        softmax_scale = softmax_scale if softmax_scale is not None else 1.0 / q.shape[2] ** 0.5
        q4, k4, v4 = padded
    if traced:   # torch.compile or export: the custom operators on the packed tensors
        o = _ops.attention_varlen(q4.squeeze(0).transpose(0, 1), k4.squeeze(0).transpose(0, 1),
                                  v4.squeeze(0).transpose(0, 1), cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                  causal, softmax_scale, mask, softcap, deterministic, sinks, allow_tf32)
        return o[..., :v.shape[2]]
    if _apply is None:
        _function()
    a = _attention
    if not (a._grad_enabled() and (q.requires_grad or k.requires_grad or v.requires_grad or
                                   (sinks is not None and sinks.requires_grad))):
        o = forward_call(a._torch, q4, k4, v4, cu_seqlens_q, cu_seqlens_k, dtype, causal, softmax_scale, mask, softcap,
                         batch, max_seqlen_q, max_seqlen_k, sinks, allow_tf32)[3]   # nothing to differentiate
    else:
        options = (dtype, causal, softmax_scale, mask, deterministic, softcap, batch, max_seqlen_q, max_seqlen_k,
                   allow_tf32)
        o = _apply(q4, k4, v4, cu_seqlens_q, cu_seqlens_k, options) if sinks is None else \
            _apply(q4, k4, v4, cu_seqlens_q, cu_seqlens_k, options, sinks)
    return o[..., :v.shape[2]].transpose(1, 2).squeeze(0)
