/* ft_attention_desc_layout: the public descriptor's fields as compiled, in one table, for the
 * bindings that mirror the struct to check their mirror against (python/flashtune/_library.py). */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

#include "flashtune.h"

#define FIELD_(name) { #name, offsetof(ft_attention_desc, name), sizeof(((ft_attention_desc *)0)->name) },

/* Every field, in the struct's order. A field added to the struct is added here too
 * (rt_check.c's DESC_KNOWN_END names the last one; test_runtime fails when this text does not
 * end where the struct does). */
static const struct {
    const char *name;
    size_t offset, size;
} fields[] = {
    FIELD_(struct_size) FIELD_(batch) FIELD_(heads) FIELD_(seqlen_q) FIELD_(seqlen_k) FIELD_(head_dim)
    FIELD_(head_dim_v) FIELD_(dtype) FIELD_(causal) FIELD_(softmax_scale) FIELD_(q_stride) FIELD_(k_stride)
    FIELD_(v_stride) FIELD_(o_stride) FIELD_(causal_align) FIELD_(window) FIELD_(window_left)
    FIELD_(window_right) FIELD_(deterministic) FIELD_(heads_k) FIELD_(softcap) FIELD_(reserved)
    FIELD_(cu_seqlens_q) FIELD_(cu_seqlens_k) FIELD_(total_q) FIELD_(total_k) FIELD_(sinks) FIELD_(dsinks)
    FIELD_(allow_tf32) FIELD_(prefix_sums_checked)
};
enum { FIELD_COUNT = sizeof fields / sizeof fields[0] };

static char text[FIELD_COUNT * 40];
static pthread_once_t made = PTHREAD_ONCE_INIT;

static void make_text(void)
{
    size_t at = 0;
    for (int i = 0; i < FIELD_COUNT && at < sizeof text; i++)
        at += (size_t)snprintf(text + at, sizeof text - at, "%s%s:%zu:%zu", i ? " " : "", fields[i].name,
                               fields[i].offset, fields[i].size);
}

FT_API const char *ft_attention_desc_layout(void)
{
    pthread_once(&made, make_text);
    return text;
}
