"""flashtune's attention as PyTorch custom operators (torch.library.custom_op), for what traces a
program instead of running it: torch.compile (fullgraph too) and torch.export see opaque
operators, ``flashtune::attention_forward`` and ``flashtune::attention_backward`` (and
``attention_varlen_forward`` / ``_backward`` for a packed batch), with fake
implementations that give the outputs' shapes, and the backward registered as the forward's
gradient. Eager calls keep the lighter autograd.Function of _attention (a custom operator costs
more host time a call); both run the same library calls (_attention.forward_call and
run_backward).

Registered when this module is imported with a PyTorch that has torch.library.custom_op (2.4 and
later); without one, compiling() is always False and attention() never comes here."""
from typing import Optional, Tuple

from . import _attention
from ._checks import check_tensors

try:
    import torch
    _HAVE_OPS = hasattr(torch, "library") and hasattr(torch.library, "custom_op")
except ImportError:   # flashtune imports without PyTorch; attention() then needs it anyway
    torch = None
    _HAVE_OPS = False


def _always_false():
    return False


_is_compiling = _is_exporting = _always_false
if _HAVE_OPS:
    _is_compiling = getattr(torch.compiler, "is_compiling", None) or torch._dynamo.is_compiling
    _is_exporting = getattr(torch.compiler, "is_exporting", _always_false)


def compiling():
    """True while torch.compile or torch.export traces the caller: then attention() goes through the
    operators (eager tensors have data, traced ones only shapes)."""
    return _is_compiling() or _is_exporting()

DTYPE_CODES = {}   # torch dtype -> ft_dtype code, for the traced path (a dict dynamo reads as a constant)
if _HAVE_OPS:
    Tensor = torch.Tensor
    DTYPE_CODES = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2, torch.float64: 3}

    def _sinks_grad(q, sinks):
        """A backward operator's fourth output: the sinks' gradient, or without sinks an empty
        tensor (an operator's outputs are tensors)."""
        return torch.empty_like(sinks) if sinks is not None else q.new_empty((0,), dtype=torch.float32)

    def _dtype_code(q, k, v):
        return check_tensors(q, k, v, True)   # grouped heads allowed: attention() checked enable_gqa

    @torch.library.custom_op("flashtune::attention_forward", mutates_args=())
    def attention_forward(q: Tensor, k: Tensor, v: Tensor, causal: bool, scale: Optional[float], causal_align: int,
                          window: int, window_left: int, window_right: int, softcap: float,
                          deterministic: Optional[bool], sinks: Optional[Tensor] = None,
                          allow_tf32: bool = False) -> Tuple[Tensor, Tensor]:
        """O [B, H, Nq, Dv] (laid out as _attention.new_output's) and L [B, H, Nq] (float32; float64
        for float64) of q, k, v [B, H, N, D], with sinks (checked: [H], float32 or float64) or not.
        deterministic is the backward's (None: torch.use_deterministic_algorithms when it runs);
        allow_tf32: float32's products may round to TF32 (both passes)."""
        _attention._Attention.get()   # binds the device and stream calls
        dtype = _dtype_code(q, k, v)
        out = _attention.forward_call(torch, q, k, v, dtype, causal, scale,
                                      (causal_align, window, window_left, window_right), softcap, sinks, allow_tf32)
        return out[3], out[4]

    @attention_forward.register_fake
    def _(q, k, v, causal, scale, causal_align, window, window_left, window_right, softcap, deterministic, sinks=None,
          allow_tf32=False):
        dtype = _dtype_code(q, k, v)
        b, h, nq, _ = q.shape
        o = _attention.new_output(torch, q.stride(), (b, h, nq, v.shape[3]), q.dtype, q.device)
        return o, q.new_empty((b, h, nq), dtype=torch.float64 if dtype == 3 else torch.float32)

    @torch.library.custom_op("flashtune::attention_backward", mutates_args=())
    def attention_backward(do: Tensor, q: Tensor, k: Tensor, v: Tensor, o: Tensor, lse: Tensor, causal: bool,
                           scale: Optional[float], causal_align: int, window: int, window_left: int, window_right: int,
                           softcap: float, deterministic: bool, sinks: Optional[Tensor] = None,
                           allow_tf32: bool = False) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
        """dQ, dK, dV of attention_forward's, laid out as torch.empty_like(q), (k), (v), and the
        sinks' gradient (empty without sinks: an operator's outputs are tensors)."""
        _attention._Attention.get()
        dtype = _dtype_code(q, k, v)
        half = dtype == 1 or dtype == 2
        # the operands as the forward passed them, and its desc (the library reads O's strides)
        q_, (b, h, nq, d), qs, _ = _attention._operand(q, half)
        k_, (_, hk, nk, _), ks, _ = _attention._operand(k, half)
        v_, (_, _, _, dv), vs, _ = _attention._operand(v, half)
        ost = o.stride()
        desc = _attention.desc_of(q_, k_, v_, o, (b, h, nq, nk, d, dv, hk), (qs, ks, vs, ost), dtype, causal, scale,
                                  (causal_align, window, window_left, window_right), softcap,
                                  _attention.address(sinks), allow_tf32)
        dsinks = _sinks_grad(q, sinks)
        grads = _attention.run_backward(torch, desc, q_.device, q_, k_, v_, o, lse, do, ost,
                                        ((q_.shape, qs), (k_.shape, ks), (v_.shape, vs)), deterministic,
                                        dsinks if sinks is not None else None)
        return tuple(_like(t, g) for t, g in zip((q, k, v), grads)) + (dsinks,)

    def _like(t, grad):
        """grad laid out as torch.empty_like(t), as the fake promised (a copy only where t's layout
        is not dense: rows longer than the head dim)."""
        want = torch.empty_like(t)
        if want.stride() == grad.stride():
            return grad
        return want.copy_(grad)

    @attention_backward.register_fake
    def _(do, q, k, v, o, lse, causal, scale, causal_align, window, window_left, window_right, softcap,
          deterministic, sinks=None, allow_tf32=False):
        _dtype_code(q, k, v)
        dsinks = _sinks_grad(q, sinks)
        return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v), dsinks

    def _setup_context(ctx, inputs, output):
        q, k, v = inputs[:3]
        sinks = inputs[11] if len(inputs) > 11 else None
        o, lse = output
        ctx.save_for_backward(q, k, v, o, lse, sinks)
        ctx.options, ctx.deterministic = inputs[3:10], inputs[10]
        ctx.allow_tf32 = bool(inputs[12]) if len(inputs) > 12 else False

    def _backward(ctx, do, dlse):
        q, k, v, o, lse, sinks = ctx.saved_tensors
        deterministic = ctx.deterministic
        if deterministic is None:
            deterministic = torch.are_deterministic_algorithms_enabled()
        dq, dk, dv, dsinks = torch.ops.flashtune.attention_backward(do, q, k, v, o, lse, *ctx.options,
                                                                    bool(deterministic), sinks, ctx.allow_tf32)
        return (dq, dk, dv) + (None,) * 8 + (dsinks if sinks is not None else None, None)

    attention_forward.register_autograd(_backward, setup_context=_setup_context)


if _HAVE_OPS:
    def _view4(t):   # _varlen's, imported late: _varlen imports this module
        from ._varlen import _view4 as view4
        return view4(t)

    def _varlen_code(q, k, v):
        return check_tensors(_view4(q), _view4(k), _view4(v), True)

    @torch.library.custom_op("flashtune::attention_varlen_forward", mutates_args=())
    def attention_varlen_forward(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Tensor, cu_seqlens_k: Tensor,
                                 max_seqlen_q: int, max_seqlen_k: int, causal: bool, scale: Optional[float],
                                 causal_align: int, window: int, window_left: int, window_right: int, softcap: float,
                                 deterministic: Optional[bool], sinks: Optional[Tensor] = None,
                                 allow_tf32: bool = False) -> Tuple[Tensor, Tensor]:
        """O [total_q, H, Dv] and L [H, total_q] of a variable-length batch packed [total, H, D]."""
        from . import _varlen
        _attention._Attention.get()
        dtype = _varlen_code(q, k, v)
        out = _varlen.forward_call(torch, _view4(q), _view4(k), _view4(v), cu_seqlens_q, cu_seqlens_k, dtype, causal,
                                   scale, (causal_align, window, window_left, window_right), softcap,
                                   cu_seqlens_q.shape[0] - 1, max_seqlen_q, max_seqlen_k, sinks, allow_tf32)
        return out[3].squeeze(0).transpose(0, 1), out[4]

    @attention_varlen_forward.register_fake
    def _(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal, scale, causal_align, window,
          window_left, window_right, softcap, deterministic, sinks=None, allow_tf32=False):
        dtype = _varlen_code(q, k, v)
        o = q.new_empty((q.shape[0], q.shape[1], v.shape[2]))
        return o, q.new_empty((q.shape[1], q.shape[0]), dtype=torch.float64 if dtype == 3 else torch.float32)

    @torch.library.custom_op("flashtune::attention_varlen_backward", mutates_args=())
    def attention_varlen_backward(do: Tensor, q: Tensor, k: Tensor, v: Tensor, o: Tensor, lse: Tensor,
                                  cu_seqlens_q: Tensor, cu_seqlens_k: Tensor, max_seqlen_q: int, max_seqlen_k: int,
                                  causal: bool, scale: Optional[float], causal_align: int, window: int,
                                  window_left: int, window_right: int, softcap: float, deterministic: bool,
                                  sinks: Optional[Tensor] = None,
                                  allow_tf32: bool = False) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
        """dQ, dK, dV of attention_varlen_forward's, laid out as torch.empty_like(q), (k), (v), and
        the sinks' gradient (empty without sinks)."""
        _attention._Attention.get()
        dtype = _varlen_code(q, k, v)
        half = dtype == 1 or dtype == 2
        q_, (_, h, total_q, d), qs, _ = _attention._operand(_view4(q), half)
        k_, (_, hk, total_k, _), ks, _ = _attention._operand(_view4(k), half)
        v_, (_, _, _, dv), vs, _ = _attention._operand(_view4(v), half)
        from . import _varlen
        o4 = _view4(o.contiguous())
        ost = o4.stride()
        desc = _varlen.desc_of((cu_seqlens_q.shape[0] - 1, h, max_seqlen_q, max_seqlen_k, d, dv, hk, total_q, total_k),
                               (qs, ks, vs, ost), cu_seqlens_q, cu_seqlens_k, dtype, causal, scale,
                               (causal_align, window, window_left, window_right), softcap,
                               _attention.address(sinks), allow_tf32)
        dsinks = _sinks_grad(q, sinks)
        grads = _attention.run_backward(torch, desc, q_.device, q_, k_, v_, o4, lse, _view4(do), ost,
                                        ((q_.shape, qs), (k_.shape, ks), (v_.shape, vs)), deterministic,
                                        dsinks if sinks is not None else None)
        return tuple(_like(t, g.squeeze(0).transpose(0, 1)) for t, g in zip((q, k, v), grads)) + (dsinks,)

    @attention_varlen_backward.register_fake
    def _(do, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal, scale, causal_align,
          window, window_left, window_right, softcap, deterministic, sinks=None, allow_tf32=False):
        _varlen_code(q, k, v)
        dsinks = _sinks_grad(q, sinks)
        return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v), dsinks

    def _varlen_setup_context(ctx, inputs, output):
        q, k, v, cu_q, cu_k = inputs[:5]
        sinks = inputs[15] if len(inputs) > 15 else None
        o, lse = output
        ctx.save_for_backward(q, k, v, o, lse, cu_q, cu_k, sinks)
        ctx.options, ctx.deterministic = inputs[5:14], inputs[14]
        ctx.allow_tf32 = bool(inputs[16]) if len(inputs) > 16 else False

    def _varlen_backward(ctx, do, dlse):
        q, k, v, o, lse, cu_q, cu_k, sinks = ctx.saved_tensors
        deterministic = ctx.deterministic
        if deterministic is None:
            deterministic = torch.are_deterministic_algorithms_enabled()
        dq, dk, dv, dsinks = torch.ops.flashtune.attention_varlen_backward(do, q, k, v, o, lse, cu_q, cu_k,
                                                                           *ctx.options, bool(deterministic), sinks,
                                                                           ctx.allow_tf32)
        return (dq, dk, dv) + (None,) * 12 + (dsinks if sinks is not None else None, None)

    attention_varlen_forward.register_autograd(_varlen_backward, setup_context=_varlen_setup_context)


def attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal, scale, mask, softcap,
                     deterministic, sinks=None, allow_tf32=False):
    """O [total_q, H, Dv] of a checked packed batch (and sinks, check_sinks's) through the operators
    (the caller pads the head dims)."""
    o, _ = torch.ops.flashtune.attention_varlen_forward(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                                        max_seqlen_k, causal, scale, *mask, softcap, deterministic,
                                                        sinks, allow_tf32)
    return o


def attention(q, k, v, causal, scale, mask, softcap, deterministic, sinks=None, allow_tf32=False):
    """O of checked [B, H, N, D] query, key and value (and sinks, check_sinks's) through the
    operators (the caller pads the head dims and makes the views, as for the eager path)."""
    o, _ = torch.ops.flashtune.attention_forward(q, k, v, causal, scale, *mask, softcap, deterministic, sinks,
                                                 allow_tf32)
    return o
