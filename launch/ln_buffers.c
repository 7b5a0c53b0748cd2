/* A problem's device buffers: every tensor of its sizes and strides, lse and the backward
 * workspace in the layout ln_workspace_bytes defines. */
#include <stdio.h>
#include <string.h>

#include "ln_internal.h"

void ln_problem_extents(const ln_problem *p, ln_extents *out)
{
    /* A variable-length batch is one packed sequence of total rows. */
    const int varlen = ln_varlen(p), batch = varlen ? 1 : p->batch;
    const int rows_q = varlen ? p->total_q : p->seqlen_q, rows_k = varlen ? p->total_k : p->seqlen_k;
    out->q = ln_tensor_elems(p->q_stride, batch, p->heads, rows_q, p->head_dim);
    out->k = ln_tensor_elems(p->k_stride, batch, ln_heads_k(p), rows_k, p->head_dim);
    out->v = ln_tensor_elems(p->v_stride, batch, ln_heads_k(p), rows_k, p->head_dim_v);
    out->o = ln_tensor_elems(p->o_stride, batch, p->heads, rows_q, p->head_dim_v);
    out->rows = ln_lse_rows(p);
}

int ln_buffers_alloc(const cu_driver *cu, ln_problem *p, char *why, size_t len)
{
    ln_extents x;
    ln_problem_extents(p, &x);
    const size_t e = ln_elem_bytes(p->dtype), a = ln_acc_bytes(p->dtype);
    size_t accum_offset;
    const size_t ws = ln_workspace_bytes(p->dtype, p->batch, p->heads, p->seqlen_q, ln_varlen(p) ? p->total_q : 0,
                                         p->head_dim, &accum_offset);
    struct { CUdeviceptr *ptr; size_t bytes; const char *name; } bufs[] = {
        { &p->q, x.q * e, "q" },   { &p->k, x.k * e, "k" },   { &p->v, x.v * e, "v" },
        { &p->o, x.o * e, "o" },   { &p->dout, x.o * e, "dout" }, { &p->dq, x.q * e, "dq" },
        { &p->dk, x.k * e, "dk" }, { &p->dv, x.v * e, "dv" },  { &p->lse, x.rows * a, "lse" },
        { &p->delta, ws, "workspace" },
    };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        *bufs[i].ptr = 0;
    p->dq_accum = 0;
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
        CUresult rc = cu->MemAlloc(bufs[i].ptr, bufs[i].bytes);
        if (rc != CUDA_SUCCESS) {
            char buf[256];
            snprintf(why, len, "cuMemAlloc(%zu bytes for %s) failed: %s", bufs[i].bytes, bufs[i].name,
                     cu_result_str(rc, buf, sizeof buf));
            *bufs[i].ptr = 0;
            ln_buffers_free(cu, p);
            return -1;
        }
    }
    p->dq_accum = p->delta + accum_offset;
    return 0;
}

void ln_buffers_free(const cu_driver *cu, ln_problem *p)
{
    CUdeviceptr *all[] = { &p->q, &p->k, &p->v, &p->o, &p->dout, &p->dq, &p->dk, &p->dv, &p->lse, &p->delta };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (*all[i])
            cu->MemFree(*all[i]);
        *all[i] = 0;
    }
    p->dq_accum = 0;   /* inside the workspace, freed with delta */
}

CUresult ln_poison(const cu_driver *cu, CUdeviceptr dst, size_t bytes)
{
    return cu->MemsetD8(dst, 0xff, bytes);
}
