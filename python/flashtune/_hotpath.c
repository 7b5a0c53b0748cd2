/* flashtune._hotpath: the common attention forward in one C call (the tensors checked, O and L
 * allocated, the library called), for the host time of a call: the Python path does the same
 * work in several times the time (notes/pytorch.md, bench/host_time.py).
 *
 * Written against CPython's stable ABI (Py_LIMITED_API, Python >= 3.9) and nothing of PyTorch:
 * tensors are read through their Python attributes; PyTorch's allocator (Tensor.new_empty), its
 * device switch and its current stream are Python callables bound by _attention; the library's
 * entry points are function pointers handed over by _library, which loaded it with ctypes. So one
 * build serves every Python and every PyTorch, and the wheel stays free of PyTorch's C++ ABI.
 *
 * It takes only the plain call: exact torch.Tensor operands [B, H, N, D] that pass every check
 * of _checks._passes, f16/bf16 ones aligned with head dims multiples of 8, is_causal a bool,
 * scale None or a float, and (attention()) nothing to differentiate; forward() also a mask
 * (causal_align, window, window_left, window_right) that _checks.check_mask made, so a KV cache's
 * bottom-right diagonal or a window costs no more host time than the plain call. Anything else returns None
 * and the Python path runs the call, with its checks and messages: this file raises only for
 * what PyTorch's own calls raise (out of memory, say). A failed library call returns its status
 * (an int) for _library.check to raise.
 *
 * backward() is the autograd backward's library call (_attention.run_backward): the desc and the
 * workspace's size come from the Python side (both remembered there per problem); dQ, dK, dV and
 * the workspace are allocated, the device switched and the library called here. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "flashtune.h"

typedef ft_status (*forward_fn)(ft_context *, const ft_attention_desc *, const void *, const void *, const void *,
                                void *, void *, void *, size_t, void *);
typedef ft_status (*workspace_size_fn)(ft_context *, const ft_attention_desc *, size_t *);
typedef ft_status (*backward_fn)(ft_context *, const ft_attention_desc *, const void *, const void *, const void *,
                                 const void *, const void *, const void *, void *, void *, void *, void *, size_t,
                                 void *);

enum { N_DTYPES = 4 };

/* What bind_library and bind_torch hand over (references held for the process's life). */
static struct {
    forward_fn forward;                      /* ft_attention_forward_ws */
    workspace_size_fn forward_workspace_size;
    backward_fn backward;                    /* ft_attention_backward_ws */
    PyObject *tensor_type;                   /* torch.Tensor: exact instances only */
    PyObject *dtypes[N_DTYPES];              /* by ft_dtype code: float32, float16, bfloat16, float64 */
    PyObject *lse_dtype_kw[2];               /* {"dtype": torch.float32}, {"dtype": torch.float64} */
    PyObject *uint8_kw;                      /* {"dtype": torch.uint8}: workspaces */
    PyObject *enter_device, *leave_device;   /* torch.cuda._exchange_device, _maybe_exchange_device */
    PyObject *current_stream;                /* torch._C._cuda_getCurrentRawStream */
    PyObject *is_grad_enabled;               /* torch.is_grad_enabled */
    long head_dim_max;                       /* _checks.HEAD_DIM_MAX: above it, SDPA's call */
} hp;

/* Attribute and method names, interned once. */
static PyObject *s_shape, *s_stride, *s_dtype, *s_data_ptr, *s_is_cuda, *s_get_device, *s_requires_grad,
    *s_new_empty, *s_new_empty_strided, *s_transpose, *one, *two;

/* An operand as read: shape and strides (new references, kept for the returned tuple), sizes,
 * data pointer, device. */
typedef struct {
    PyObject *shape, *stride;
    long long n[4], s[4];
    unsigned long long ptr;
    long device;
} operand;

static void operand_clear(operand *op)
{
    Py_XDECREF(op->shape);
    Py_XDECREF(op->stride);
    op->shape = op->stride = NULL;
}

/* The four items of a tuple of ints into out; 0 when t is not one (no error left set). */
static int four_ints(PyObject *t, long long out[4])
{
    if (!PyTuple_Check(t) || PyTuple_Size(t) != 4)
        return 0;
    for (Py_ssize_t i = 0; i < 4; i++) {
        out[i] = PyLong_AsLongLong(PyTuple_GetItem(t, i));
        if (out[i] == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
    }
    return 1;
}

/* 1 when t's value is Py_True (the reference is released); -1 when reading it failed. */
static int is_true(PyObject *value)
{
    if (!value)
        return -1;
    int yes = value == Py_True;
    Py_DECREF(value);
    return yes;
}

/* Reads t into op: 1 when t is an exact torch.Tensor of dtype `dtype` (NULL: any of the four,
 * its code in *code), 4-dimensional, on a CUDA device; 0 when not (no error left set). */
static int read_operand(operand *op, PyObject *t, int *code)
{
    if ((PyObject *)Py_TYPE(t) != hp.tensor_type)
        return 0;
    PyObject *dtype = PyObject_GetAttr(t, s_dtype);
    if (!dtype)
        goto not_hot;
    int found = -1;
    for (int i = 0; i < N_DTYPES; i++)
        if (dtype == hp.dtypes[i])
            found = i;
    Py_DECREF(dtype);
    if (found < 0 || (*code >= 0 && found != *code))
        return 0;
    *code = found;
    if (is_true(PyObject_GetAttr(t, s_is_cuda)) != 1)
        goto not_hot;
    op->shape = PyObject_GetAttr(t, s_shape);
    op->stride = op->shape ? PyObject_CallMethodObjArgs(t, s_stride, NULL) : NULL;
    if (!op->stride || !four_ints(op->shape, op->n) || !four_ints(op->stride, op->s))
        goto not_hot;
    PyObject *ptr = PyObject_CallMethodObjArgs(t, s_data_ptr, NULL);
    if (!ptr)
        goto not_hot;
    op->ptr = PyLong_AsUnsignedLongLong(ptr);
    Py_DECREF(ptr);
    PyObject *device = PyObject_CallMethodObjArgs(t, s_get_device, NULL);
    if (!device)
        goto not_hot;
    op->device = PyLong_AsLong(device);
    Py_DECREF(device);
    if (PyErr_Occurred())
        goto not_hot;
    return 1;
not_hot:
    PyErr_Clear();
    operand_clear(op);
    return 0;
}

/* f16/bf16 kernels read 16-byte pieces: the data aligned and every stride of a dimension longer
 * than 1 a multiple of 8 elements (else the Python path copies the operand). */
static int half_aligned(const operand *op)
{
    if (op->ptr % 16)
        return 0;
    for (int i = 0; i < 3; i++)
        if (op->n[i] > 1 && op->s[i] % 8)
            return 0;
    return 1;
}

/* _checks._passes for q, k, v read, plus what the Python path would copy or pad. */
static int shapes_pass(const operand *q, const operand *k, const operand *v, int gqa, int code)
{
    long long b = q->n[0], h = q->n[1], nq = q->n[2], d = q->n[3];
    long long hk = k->n[1], nk = k->n[2], dv = v->n[3];
    if (k->n[0] != b || v->n[0] != b || v->n[1] != hk || v->n[2] != nk || k->n[3] != d)
        return 0;
    if (hk != h && !(gqa && hk > 0 && h % hk == 0))
        return 0;
    if (!(d > 0 && d <= hp.head_dim_max && dv > 0 && dv <= hp.head_dim_max) || b < 1 || h < 1 || nq < 1 || nk < 1)
        return 0;
    if (b > INT_MAX || h > INT_MAX || nq > INT_MAX || nk > INT_MAX)
        return 0;
    if (q->s[3] != 1 || k->s[3] != 1 || v->s[3] != 1)
        return 0;
    if (q->device < 0 || k->device != q->device || v->device != q->device)
        return 0;
    int half = code == FT_F16 || code == FT_BF16;
    if (half && (d % 8 || dv % 8 || !half_aligned(q) || !half_aligned(k) || !half_aligned(v)))
        return 0;
    return 1;
}

/* t.new_empty(shape, **kw): PyTorch's caching allocator, on t's device (t's dtype unless kw). */
static PyObject *new_empty(PyObject *t, PyObject *shape, PyObject *kw)
{
    if (!shape)
        return NULL;
    PyObject *method = PyObject_GetAttr(t, s_new_empty);
    PyObject *args = method ? PyTuple_Pack(1, shape) : NULL;
    PyObject *out = args ? PyObject_Call(method, args, kw) : NULL;
    Py_XDECREF(args);
    Py_XDECREF(method);
    Py_DECREF(shape);
    return out;
}

static unsigned long long data_ptr(PyObject *t)
{
    PyObject *p = PyObject_CallMethodObjArgs(t, s_data_ptr, NULL);
    if (!p)
        return 0;
    unsigned long long v = PyLong_AsUnsignedLongLong(p);
    Py_DECREF(p);
    return PyErr_Occurred() ? 0 : v;
}

/* The device switched back (leave_device(prev)) whatever happened before, on the way out of a
 * library call: returns status, or -1 with a Python error set when switching back failed or an
 * error was already set (the first error is the one reported). status -1 without an error is a
 * workspace that had no data pointer, so named. */
static int leave_device(PyObject *prev, int status, const char *call)
{
    PyObject *type, *value, *trace;
    PyErr_Fetch(&type, &value, &trace);
    PyObject *r = PyObject_CallFunctionObjArgs(hp.leave_device, prev, NULL);
    if (type) {
        Py_XDECREF(r);
        PyErr_Restore(type, value, trace);
        status = -1;
    } else if (!r) {
        status = -1;
    } else {
        Py_DECREF(r);
    }
    if (status == -1 && !PyErr_Occurred())
        PyErr_Format(PyExc_RuntimeError, "flashtune: the %s's workspace has no data pointer", call);
    return status;
}

/* The library's forward of the checked operands into a fresh O and L, on the operands' device's
 * current stream. Returns FT_OK with out[] = O, L, the desc (bytes) and O's strides (new
 * references), the library's status when its call failed, or -1 with a Python error set when
 * one of PyTorch's calls failed. */
static int run_forward(ft_context *ctx, PyObject *q, const operand *oq, const operand *ok, const operand *ov,
                       int code, int causal, double scale, const int mask[4], PyObject *out[4])
{
    const long long b = oq->n[0], h = oq->n[1], nq = oq->n[2], dv = ov->n[3];
    /* O in the query's order, as _attention.new_output lays it out */
    const int rows_outer = oq->s[1] < oq->s[2] && h > 1 && nq > 1;
    PyObject *o = NULL, *lse = NULL, *ws = NULL, *index = NULL, *prev = NULL, *stream = NULL;
    unsigned long long o_ptr, lse_ptr, ws_ptr = 0;
    size_t bytes = 0;
    void *stream_ptr;
    PyThreadState *ts;
    int status = -1;
    ft_status s;
    ft_attention_desc d;
    memset(&d, 0, sizeof d);   /* the padding too: the bytes are compared as keys */
    d.struct_size = sizeof d;
    d.batch = (int)b, d.heads = (int)h, d.seqlen_q = (int)nq, d.seqlen_k = (int)ok->n[2];
    d.head_dim = (int)oq->n[3], d.head_dim_v = (int)dv, d.dtype = (ft_dtype)code, d.causal = causal;
    d.softmax_scale = (float)scale;
    d.causal_align = mask[0], d.window = mask[1], d.window_left = mask[2], d.window_right = mask[3];
    d.heads_k = (int)ok->n[1];
    for (int i = 0; i < 3; i++)
        d.q_stride[i] = oq->s[i], d.k_stride[i] = ok->s[i], d.v_stride[i] = ov->s[i];
    if (rows_outer) {
        o = new_empty(q, Py_BuildValue("(LLLL)", b, nq, h, dv), NULL);
        if (o) {
            PyObject *view = PyObject_CallMethodObjArgs(o, s_transpose, one, two, NULL);
            Py_DECREF(o);
            o = view;
        }
        d.o_stride[0] = nq * h * dv, d.o_stride[1] = dv, d.o_stride[2] = h * dv;
    } else {
        o = new_empty(q, Py_BuildValue("(LLLL)", b, h, nq, dv), NULL);
        d.o_stride[0] = h * nq * dv, d.o_stride[1] = nq * dv, d.o_stride[2] = dv;
    }
    if (!o || !(lse = new_empty(q, Py_BuildValue("(LLL)", b, h, nq), hp.lse_dtype_kw[code == FT_F64])))
        goto done;
    o_ptr = data_ptr(o);
    lse_ptr = data_ptr(lse);
    if (PyErr_Occurred() || !(index = PyLong_FromLong(oq->device)) ||
        !(prev = PyObject_CallFunctionObjArgs(hp.enter_device, index, NULL)))
        goto done;
    ts = PyEval_SaveThread();   /* the first call of a problem may load or compile its kernel */
    s = hp.forward_workspace_size(ctx, &d, &bytes);
    PyEval_RestoreThread(ts);
    if (s != FT_OK) {
        status = s;
        goto leave;
    }
    if (bytes) {   /* a split forward's partial sums */
        ws = new_empty(q, Py_BuildValue("(n)", (Py_ssize_t)bytes), hp.uint8_kw);
        if (!ws || !(ws_ptr = data_ptr(ws)))
            goto leave;
    }
    if (!(stream = PyObject_CallFunctionObjArgs(hp.current_stream, index, NULL)))
        goto leave;
    stream_ptr = PyLong_AsVoidPtr(stream);
    if (PyErr_Occurred())
        goto leave;
    ts = PyEval_SaveThread();
    s = hp.forward(ctx, &d, (const void *)(uintptr_t)oq->ptr, (const void *)(uintptr_t)ok->ptr,
                   (const void *)(uintptr_t)ov->ptr, (void *)(uintptr_t)o_ptr, (void *)(uintptr_t)lse_ptr,
                   (void *)(uintptr_t)ws_ptr, bytes, stream_ptr);
    PyEval_RestoreThread(ts);
    status = s;
leave:
    status = leave_device(prev, status, "forward");
    if (status == FT_OK) {
        out[2] = PyBytes_FromStringAndSize((const char *)&d, sizeof d);
        out[3] = Py_BuildValue("(LLLL)", (long long)d.o_stride[0], (long long)d.o_stride[1],
                               (long long)d.o_stride[2], 1LL);
        if (!out[2] || !out[3]) {
            Py_CLEAR(out[2]);
            Py_CLEAR(out[3]);
            status = -1;
        } else {
            out[0] = o, out[1] = lse, o = lse = NULL;
        }
    }
done:
    Py_XDECREF(o);
    Py_XDECREF(lse);
    Py_XDECREF(ws);
    Py_XDECREF(index);
    Py_XDECREF(prev);
    Py_XDECREF(stream);
    return status;
}

/* The desc's (causal_align, window, window_left, window_right) from forward()'s mask: None or
 * absent is no mask; else a tuple of four ints as _checks.check_mask returns it (its values checked
 * there and again by the library). 1 read, 0 anything else (left to the Python path). */
static int read_mask(PyObject *mask, int out[4])
{
    out[0] = out[1] = out[2] = out[3] = 0;
    if (!mask || mask == Py_None)
        return 1;
    if (!PyTuple_CheckExact(mask) || PyTuple_Size(mask) != 4)
        return 0;
    for (Py_ssize_t i = 0; i < 4; i++) {
        PyObject *x = PyTuple_GetItem(mask, i);
        if (!x || !PyLong_CheckExact(x))
            return 0;
        int overflow = 0;
        const long long value = PyLong_AsLongLongAndOverflow(x, &overflow);
        if (overflow || value < INT_MIN || value > INT_MAX || (value == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0;
        }
        out[i] = (int)value;
    }
    return 1;
}

/* The arguments both entry points take: (ctx, q, k, v, is_causal, scale, enable_gqa), and forward()'s
 * mask after them. Returns 1 with the operands read and checked, 0 for a call to leave to Python,
 * -1 on an error. */
static int parse_call(PyObject *args, int need_no_grad, ft_context **ctx, PyObject **q, operand ops[3], int *code,
                      int *causal, double *scale, int mask[4])
{
    PyObject *ctx_obj, *k, *v, *causal_obj, *scale_obj, *gqa_obj, *mask_obj = NULL;
    if (!PyArg_UnpackTuple(args, need_no_grad ? "attention" : "forward", 7, need_no_grad ? 7 : 8, &ctx_obj, q, &k, &v,
                           &causal_obj, &scale_obj, &gqa_obj, &mask_obj))
        return -1;
    if (!hp.forward || !hp.tensor_type || !read_mask(mask_obj, mask))
        return 0;
    if ((causal_obj != Py_True && causal_obj != Py_False) || (gqa_obj != Py_True && gqa_obj != Py_False))
        return 0;
    *causal = causal_obj == Py_True;
    *scale = 0.0;   /* the library's 1/sqrt(head_dim) */
    if (scale_obj != Py_None) {
        if (!PyFloat_Check(scale_obj))
            return 0;
        *scale = PyFloat_AsDouble(scale_obj);
        if (!(isfinite(*scale) && *scale > 0 && *scale <= FLT_MAX && (float)*scale > 0))
            return 0;   /* (the Python path names what float32 cannot hold) */
    }
    *ctx = PyLong_AsVoidPtr(ctx_obj);
    if (!*ctx) {
        PyErr_Clear();
        return 0;
    }
    if (need_no_grad) {   /* autograd's calls are attention()'s Python path */
        int on = is_true(PyObject_CallObject(hp.is_grad_enabled, NULL));
        if (on < 0)
            return -1;
        PyObject *const tensors[3] = { *q, k, v };
        for (int i = 0; on && i < 3; i++) {
            int grad = is_true(PyObject_GetAttr(tensors[i], s_requires_grad));
            if (grad != 0) {
                PyErr_Clear();
                return 0;
            }
        }
    }
    *code = -1;
    if (!read_operand(&ops[0], *q, code))
        return 0;
    if (!read_operand(&ops[1], k, code) || !read_operand(&ops[2], v, code) ||
        !shapes_pass(&ops[0], &ops[1], &ops[2], gqa_obj == Py_True, *code)) {
        for (int i = 0; i < 3; i++)
            operand_clear(&ops[i]);
        return 0;
    }
    return 1;
}

static PyObject *call(PyObject *args, int whole)
{
    ft_context *ctx;
    PyObject *q, *out[4] = { NULL, NULL, NULL, NULL };
    operand ops[3] = { { 0 } };
    int code, causal, mask[4];
    double scale;
    int parsed = parse_call(args, !whole, &ctx, &q, ops, &code, &causal, &scale, mask);
    if (parsed <= 0) {
        if (parsed < 0)
            return NULL;
        Py_RETURN_NONE;
    }
    PyObject *result = NULL;
    int status = run_forward(ctx, q, &ops[0], &ops[1], &ops[2], code, causal, scale, mask, out);
    if (status > 0)
        result = PyLong_FromLong(status);
    else if (status == 0 && !whole)
        result = out[0], out[0] = NULL;
    else if (status == 0) {
        /* _attention.forward_call's tuple: q, k, v, o, lse, desc, ((shape, strides) x 3), O's strides */
        PyObject *k = PyTuple_GetItem(args, 2), *v = PyTuple_GetItem(args, 3);
        result = Py_BuildValue("(OOOOOO((OO)(OO)(OO))O)", q, k, v, out[0], out[1], out[2], ops[0].shape, ops[0].stride,
                               ops[1].shape, ops[1].stride, ops[2].shape, ops[2].stride, out[3]);
    }
    for (int i = 0; i < 4; i++)
        Py_XDECREF(out[i]);
    for (int i = 0; i < 3; i++)
        operand_clear(&ops[i]);
    return result;
}

PyDoc_STRVAR(attention_doc,
             "attention(ctx, q, k, v, is_causal, scale, enable_gqa) -> O, None (a call for the Python path: "
             "anything to differentiate, or not the plain call) or a failed library call's status (int).");

static PyObject *hp_attention(PyObject *self, PyObject *args)
{
    (void)self;
    return call(args, 0);
}

PyDoc_STRVAR(forward_doc,
             "forward(ctx, q, k, v, is_causal, scale, enable_gqa[, mask]) -> _attention.forward_call's tuple (q, k, "
             "v, o, lse, desc, shapes, O's strides), None or a status, as attention() but whether or not "
             "anything needs a gradient (autograd.Function.forward's call); mask: None or check_mask's "
             "(causal_align, window, window_left, window_right).");

static PyObject *hp_forward(PyObject *self, PyObject *args)
{
    (void)self;
    return call(args, 1);
}

/* t.new_empty_strided(shape, strides) of a (shape, strides) pair (checked by the caller): a
 * gradient laid out as its operand (_attention.run_backward). */
static PyObject *new_strided(PyObject *t, PyObject *shape_strides)
{
    return PyObject_CallMethodObjArgs(t, s_new_empty_strided, PyTuple_GetItem(shape_strides, 0),
                                      PyTuple_GetItem(shape_strides, 1), NULL);
}

/* The library's backward of desc into fresh dQ, dK, dV, on q's device's current stream. Returns
 * FT_OK with grads[] = dQ, dK, dV (new references), the library's status when its call failed,
 * -1 with a Python error set when one of PyTorch's calls failed, or -2 (no error) for a tensor
 * without data (an empty one): the Python path's call. */
static int run_backward(ft_context *ctx, const ft_attention_desc *d, size_t bytes, PyObject *const t[6],
                        PyObject *shapes, long device, PyObject *grads[3])
{
    unsigned long long p[9], ws_ptr = 0;
    PyObject *ws = NULL, *index = NULL, *prev = NULL, *stream = NULL;
    PyThreadState *ts;
    void *stream_ptr;
    int status = -1;
    for (int i = 0; i < 3; i++)   /* q's device and dtype; k's and v's are the same (checked) */
        if (!(grads[i] = new_strided(t[0], PyTuple_GetItem(shapes, i))))
            goto done;
    for (int i = 0; i < 9; i++)   /* q, k, v, o, lse, dO, then dQ, dK, dV */
        if (!(p[i] = data_ptr(i < 6 ? t[i] : grads[i - 6]))) {
            status = PyErr_Occurred() ? -1 : -2;
            goto done;
        }
    if (!(index = PyLong_FromLong(device)) || !(prev = PyObject_CallFunctionObjArgs(hp.enter_device, index, NULL)))
        goto done;
    if (bytes) {   /* delta, the dQ accumulator, and the groups' partial dK and dV */
        ws = new_empty(t[0], Py_BuildValue("(n)", (Py_ssize_t)bytes), hp.uint8_kw);
        if (!ws || !(ws_ptr = data_ptr(ws)))
            goto leave;
    }
    if (!(stream = PyObject_CallFunctionObjArgs(hp.current_stream, index, NULL)))
        goto leave;
    stream_ptr = PyLong_AsVoidPtr(stream);
    if (PyErr_Occurred())
        goto leave;
    ts = PyEval_SaveThread();   /* the first call of a problem may load or compile its kernels */
    status = hp.backward(ctx, d, (const void *)(uintptr_t)p[0], (const void *)(uintptr_t)p[1],
                         (const void *)(uintptr_t)p[2], (const void *)(uintptr_t)p[3], (const void *)(uintptr_t)p[4],
                         (const void *)(uintptr_t)p[5], (void *)(uintptr_t)p[6], (void *)(uintptr_t)p[7],
                         (void *)(uintptr_t)p[8], (void *)(uintptr_t)ws_ptr, bytes, stream_ptr);
    PyEval_RestoreThread(ts);
leave:
    status = leave_device(prev, status, "backward");
done:
    if (status != FT_OK)
        for (int i = 0; i < 3; i++)
            Py_CLEAR(grads[i]);
    Py_XDECREF(ws);
    Py_XDECREF(index);
    Py_XDECREF(prev);
    Py_XDECREF(stream);
    return status;
}

PyDoc_STRVAR(backward_doc,
             "backward(ctx, desc, workspace_bytes, q, k, v, o, lse, do, o_strides, shapes) -> (dQ, dK, dV), None "
             "(dO not laid out as O: the Python path copies it) or a failed library call's status (int). desc: "
             "the forward's packed desc (deterministic set as wanted); shapes: ((shape, strides) of q, k, v).");

static PyObject *hp_backward(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *ctx_obj, *desc, *bytes_obj, *t[6], *ost, *shapes;
    if (!PyArg_UnpackTuple(args, "backward", 11, 11, &ctx_obj, &desc, &bytes_obj, &t[0], &t[1], &t[2], &t[3], &t[4],
                           &t[5], &ost, &shapes))
        return NULL;
    if (!hp.backward || !hp.tensor_type || !PyBytes_Check(desc) ||
        PyBytes_Size(desc) != (Py_ssize_t)sizeof(ft_attention_desc) || !PyTuple_Check(shapes) ||
        PyTuple_Size(shapes) != 3)
        Py_RETURN_NONE;
    for (int i = 0; i < 6; i++)
        if ((PyObject *)Py_TYPE(t[i]) != hp.tensor_type)
            Py_RETURN_NONE;
    for (int i = 0; i < 3; i++) {   /* (shape, strides) pairs: anything else is the Python path's */
        PyObject *pair = PyTuple_GetItem(shapes, i);
        if (!PyTuple_Check(pair) || PyTuple_Size(pair) != 2)
            Py_RETURN_NONE;
    }
    ft_context *ctx = PyLong_AsVoidPtr(ctx_obj);
    const size_t bytes = PyLong_AsSize_t(bytes_obj);
    if (!ctx || PyErr_Occurred()) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    /* dO is read with O's strides (the desc's): another layout is copied by the Python path */
    PyObject *do_strides = PyObject_CallMethodObjArgs(t[5], s_stride, NULL);
    const int same = do_strides ? PyObject_RichCompareBool(do_strides, ost, Py_EQ) : -1;
    Py_XDECREF(do_strides);
    if (same != 1) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    PyObject *dev = PyObject_CallMethodObjArgs(t[0], s_get_device, NULL);
    const long device = dev ? PyLong_AsLong(dev) : -1;
    Py_XDECREF(dev);
    if (device < 0) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    ft_attention_desc d;
    memcpy(&d, PyBytes_AsString(desc), sizeof d);
    PyObject *grads[3] = { NULL, NULL, NULL };
    const int status = run_backward(ctx, &d, bytes, t, shapes, device, grads);
    if (status > 0)
        return PyLong_FromLong(status);
    if (status == -2)
        Py_RETURN_NONE;
    if (status < 0)
        return NULL;
    PyObject *out = PyTuple_Pack(3, grads[0], grads[1], grads[2]);
    for (int i = 0; i < 3; i++)
        Py_DECREF(grads[i]);
    return out;
}

PyDoc_STRVAR(bind_library_doc,
             "bind_library(forward_ws, forward_workspace_size, backward_ws): the addresses of the loaded "
             "library's ft_attention_forward_ws, ft_attention_forward_workspace_size and ft_attention_backward_ws "
             "(0, 0, 0 unbinds).");

static PyObject *hp_bind_library(PyObject *self, PyObject *args)
{
    (void)self;
    unsigned long long forward, size, backward;
    if (!PyArg_ParseTuple(args, "KKK:bind_library", &forward, &size, &backward))
        return NULL;
    if (!forward != !size || !forward != !backward) {
        PyErr_SetString(PyExc_ValueError, "bind_library: all three addresses or none");
        return NULL;
    }
    hp.forward = (forward_fn)(uintptr_t)forward;
    hp.forward_workspace_size = (workspace_size_fn)(uintptr_t)size;
    hp.backward = (backward_fn)(uintptr_t)backward;
    Py_RETURN_NONE;
}

static PyObject *dtype_kw(PyObject *dtype)
{
    PyObject *kw = PyDict_New();
    if (kw && PyDict_SetItemString(kw, "dtype", dtype) < 0)
        Py_CLEAR(kw);
    return kw;
}

static void set_ref(PyObject **slot, PyObject *value)
{
    PyObject *old = *slot;
    *slot = value;
    Py_XDECREF(old);
}

PyDoc_STRVAR(bind_torch_doc,
             "bind_torch(Tensor, (float32, float16, bfloat16, float64), uint8, enter_device, leave_device, "
             "current_stream, is_grad_enabled, head_dim_max): PyTorch's objects this module calls, and the "
             "largest head dim the package runs.");

static PyObject *hp_bind_torch(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *tensor, *dtypes, *uint8, *enter, *leave, *stream, *grad;
    long head_dim_max;
    if (!PyArg_ParseTuple(args, "OOOOOOOl:bind_torch", &tensor, &dtypes, &uint8, &enter, &leave, &stream, &grad,
                          &head_dim_max))
        return NULL;
    if (!PyTuple_Check(dtypes) || PyTuple_Size(dtypes) != N_DTYPES) {
        PyErr_SetString(PyExc_TypeError,
                        "bind_torch: dtypes must be a tuple of 4 (float32, float16, bfloat16, float64)");
        return NULL;
    }
    PyObject *kw32 = dtype_kw(PyTuple_GetItem(dtypes, FT_F32)), *kw64 = dtype_kw(PyTuple_GetItem(dtypes, FT_F64));
    PyObject *kw8 = dtype_kw(uint8);
    if (!kw32 || !kw64 || !kw8) {
        Py_XDECREF(kw32);
        Py_XDECREF(kw64);
        Py_XDECREF(kw8);
        return NULL;
    }
    set_ref(&hp.lse_dtype_kw[0], kw32);
    set_ref(&hp.lse_dtype_kw[1], kw64);
    set_ref(&hp.uint8_kw, kw8);
    for (int i = 0; i < N_DTYPES; i++) {
        PyObject *dt = PyTuple_GetItem(dtypes, i);
        Py_INCREF(dt);
        set_ref(&hp.dtypes[i], dt);
    }
    PyObject *const given[] = { tensor, enter, leave, stream, grad };
    PyObject **const slots[] = { &hp.tensor_type, &hp.enter_device, &hp.leave_device, &hp.current_stream,
                                 &hp.is_grad_enabled };
    for (int i = 0; i < 5; i++) {
        Py_INCREF(given[i]);
        set_ref(slots[i], given[i]);
    }
    hp.head_dim_max = head_dim_max;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    { "attention", hp_attention, METH_VARARGS, attention_doc },
    { "forward", hp_forward, METH_VARARGS, forward_doc },
    { "backward", hp_backward, METH_VARARGS, backward_doc },
    { "bind_library", hp_bind_library, METH_VARARGS, bind_library_doc },
    { "bind_torch", hp_bind_torch, METH_VARARGS, bind_torch_doc },
    { NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "flashtune._hotpath",
    "The plain attention forward in one C call (stable ABI; see _hotpath.c).", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__hotpath(void)
{
    const char *names[] = { "shape", "stride", "dtype", "data_ptr", "is_cuda", "get_device", "requires_grad",
                            "new_empty", "new_empty_strided", "transpose" };
    PyObject **const slots[] = { &s_shape, &s_stride, &s_dtype, &s_data_ptr, &s_is_cuda, &s_get_device,
                                 &s_requires_grad, &s_new_empty, &s_new_empty_strided, &s_transpose };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!(*slots[i] = PyUnicode_InternFromString(names[i])))
            return NULL;
    if (!(one = PyLong_FromLong(1)) || !(two = PyLong_FromLong(2)))
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    /* what _library checks before binding: the desc this file was compiled with, its version */
    if (PyModule_AddIntConstant(m, "DESC_SIZE", (long)sizeof(ft_attention_desc)) < 0 ||
        PyModule_AddStringConstant(m, "VERSION", FT_HOTPATH_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
