"""flashtune.attention: a torch.autograd.Function over libflashtune's forward and backward."""
import ctypes

from . import _library
from ._checks import check_options, check_tensors


def _desc(q, k, v, o, dtype, causal, scale):
    d = _library.AttentionDesc()
    d.batch, d.heads, d.seqlen_q, d.head_dim = q.shape
    d.seqlen_k, d.head_dim_v = k.shape[2], v.shape[3]
    d.dtype, d.causal = dtype, int(causal)
    d.softmax_scale = float(scale) if scale is not None else 0.0
    for field, t in (("q_stride", q), ("k_stride", k), ("v_stride", v), ("o_stride", o)):
        getattr(d, field)[:] = t.stride()[:3]
    return d


def _tensor_core_ready(t):
    """f16/bf16 kernels need 16-byte aligned data and strides that are multiples of 8 elements."""
    if t.element_size() != 2:
        return t
    if t.data_ptr() % 16 == 0 and all(s % 8 == 0 for s, n in zip(t.stride()[:3], t.shape[:3]) if n > 1):
        return t
    return t.contiguous()


def _stream(t):
    import torch
    return ctypes.c_void_p(torch.cuda.current_stream(t.device).cuda_stream)


class _Attention:
    """Holder of the autograd.Function class, defined when torch is first needed."""
    cls = None

    @classmethod
    def get(cls):
        if cls.cls is None:
            import torch

            class FlashtuneAttention(torch.autograd.Function):
                @staticmethod
                def forward(ctx, q, k, v, dtype, causal, scale):
                    lib, handle = _library.library(), _library.context()
                    q, k, v = (_tensor_core_ready(t) for t in (q, k, v))
                    b, h, nq, _ = q.shape
                    o = torch.empty((b, h, nq, v.shape[3]), dtype=q.dtype, device=q.device)
                    lse = torch.empty((b, h, nq), dtype=torch.float64 if dtype == 3 else torch.float32,
                                      device=q.device)
                    d = _desc(q, k, v, o, dtype, causal, scale)
                    with torch.cuda.device(q.device):
                        _library.check(lib.ft_attention_forward(handle, ctypes.byref(d), q.data_ptr(), k.data_ptr(),
                                                                v.data_ptr(), o.data_ptr(), lse.data_ptr(),
                                                                _stream(q)), handle)
                    ctx.save_for_backward(q, k, v, o, lse)
                    ctx.ft = (dtype, causal, scale)
                    return o

                @staticmethod
                def backward(ctx, do):
                    lib, handle = _library.library(), _library.context()
                    q, k, v, o, lse = ctx.saved_tensors
                    dtype, causal, scale = ctx.ft
                    if do.stride() != o.stride():   # dO is read with O's strides
                        do = do.contiguous()
                    dq = torch.empty_strided(q.shape, q.stride(), dtype=q.dtype, device=q.device)
                    dk = torch.empty_strided(k.shape, k.stride(), dtype=k.dtype, device=k.device)
                    dv = torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device=v.device)
                    d = _desc(q, k, v, o, dtype, causal, scale)
                    with torch.cuda.device(q.device):
                        _library.check(lib.ft_attention_backward(handle, ctypes.byref(d), q.data_ptr(), k.data_ptr(),
                                                                 v.data_ptr(), o.data_ptr(), lse.data_ptr(),
                                                                 do.data_ptr(), dq.data_ptr(), dk.data_ptr(),
                                                                 dv.data_ptr(), _stream(q)), handle)
                    return dq, dk, dv, None, None, None

            cls.cls = FlashtuneAttention
        return cls.cls


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False, *,
              causal=None):
    """Scaled dot-product attention with flashtune's tuned kernels, differentiable.

    The arguments mean what they mean in ``torch.nn.functional.scaled_dot_product_attention``, so
    switching is one line: query [B, H, Nq, D], key [B, H, Nk, D], value [B, H, Nk, Dv], or any
    strided view whose last dimension is contiguous (e.g. a [B, N, H, D] tensor transposed);
    float64, float32, float16 or bfloat16, all on the same CUDA device; runs on the current
    stream. ``is_causal`` (or its alias ``causal``) masks keys after the query's position (top
    left); ``scale`` defaults to 1/sqrt(D). Returns O [B, H, Nq, Dv]. Head dims: 32, 64, 96, 128,
    256. Not supported: ``attn_mask``, ``dropout_p`` > 0, ``enable_gqa``.

    Raises TypeError (not a tensor, unsupported or mixed dtypes, a non-number scale), ValueError
    (shapes, head dims, layout, devices, unsupported options: checked before the GPU is
    touched), LibraryNotFound (libflashtune not found: the message lists where it looked) and
    FlashtuneError (a failure inside the library, with its status and message)."""
    causal, scale = check_options(attn_mask, dropout_p, is_causal, causal, scale, enable_gqa)
    dtype = check_tensors(query, key, value)
    return _Attention.get().apply(query, key, value, dtype, causal, scale)


def describe_choice(query, key, value, is_causal=False, backward=False):
    """The kernel libflashtune runs for these tensors and the rule that picked it, as text."""
    dtype = check_tensors(query, key, value)
    import torch
    b, h, nq, _ = query.shape
    o = torch.empty((b, h, nq, value.shape[3]), dtype=query.dtype, device="meta")
    d = _desc(query, key, value, o, dtype, is_causal, None)
    lib, handle = _library.library(), _library.context()
    buf = ctypes.create_string_buffer(1024)
    _library.check(lib.ft_describe_choice(handle, ctypes.byref(d), int(backward), buf, len(buf)), handle)
    return buf.value.decode()
