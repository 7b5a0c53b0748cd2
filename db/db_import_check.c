/* The generator's word on an imported winner (db_import_check_generated): the kernel is one
 * this build generates for that workload on that GPU, and its source_hash is the hash of the
 * source it would compile. In its own library (ft_db_check): ft_db links only the parameter
 * table, no NVRTC or templates, and the runtime, which imports only the winners it embeds,
 * does not need this. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_import_check.h"
#include "gen_internal.h"

/* Formats the reason into why and returns -1. */
static int refuse(char *why, size_t len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int refuse(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* "fwd_mma, fwd_wgmma, ...": the catalogue's names. */
static void family_names(char *buf, size_t len)
{
    int count;
    const gen_family *const *list = gen_family_list(&count);
    buf[0] = '\0';
    for (int i = 0; i < count; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", i ? ", " : "", list[i]->name);
    }
}

static int check_device(const db_device *dev, char *why, size_t len)
{
    char archs[128];
    gen_arch_names(1, archs, sizeof archs);
    if (!gen_arch_supported(dev->arch))
        return refuse(why, len, "field 'arch': '%s' is not an arch this flashtune compiles for (%s)", dev->arch,
                      archs);
    char arch[32];
    snprintf(arch, sizeof arch, "sm_%d%d", dev->cc_major, dev->cc_minor);
    if (strcmp(arch, dev->arch))
        return refuse(why, len, "field 'arch': '%s' is not the arch of cc=%d.%d (%s)", dev->arch, dev->cc_major,
                      dev->cc_minor, arch);
    return 0;
}

int db_import_check_generated(const db_device *dev, const db_workload *w, const db_kernel *k, char *why, size_t len)
{
    if (check_device(dev, why, len))
        return -1;
    const gen_family *f = gen_family_find(k->family);
    if (!f) {
        char names[256];
        family_names(names, sizeof names);
        return refuse(why, len, "field 'family': '%s' is not a family (%s)", k->family, names);
    }
    if (f->backward != (w->op == DB_OP_BWD))
        return refuse(why, len, "field 'family': %s is a %s family, but op=%s", f->name,
                      f->backward ? "backward" : "forward", db_op_name(w->op));
    char reason[512];
    if (gen_check_arch(f, dev->arch, reason, sizeof reason))
        return refuse(why, len, "field 'family': %s", reason);
    if (gen_check_problem_sizes(w->batch, w->heads, w->seqlen_q, w->seqlen_k, reason, sizeof reason))
        return refuse(why, len, "workload: %s", reason);

    gen_config c = { .family = f };
    memcpy(c.p, k->p, sizeof c.p);
    if (gen_validate(&c, gen_smem_limit_for_arch(dev->arch), reason, sizeof reason))
        return refuse(why, len, "kernel %s on %s: %s", f->name, dev->arch, reason);
    /* EVEN_M and EVEN_N follow from the lengths, as the space loader derives them. */
    gen_config fit = c;
    gen_config_fit_lengths(&fit, w->seqlen_q, w->seqlen_k);
    const struct { gen_param even, block; char side; int seqlen; } evens[] = {
        { GEN_EVEN_M, GEN_BLOCK_M, 'q', w->seqlen_q }, { GEN_EVEN_N, GEN_BLOCK_N, 'k', w->seqlen_k },
    };
    for (int i = 0; i < 2; i++)
        if (fit.p[evens[i].even] != c.p[evens[i].even])
            return refuse(why, len, "field '%s': %d, but seqlen_%c=%d and %s=%d give %d",
                          gen_param_name(evens[i].even), c.p[evens[i].even], evens[i].side, evens[i].seqlen,
                          gen_param_name(evens[i].block), c.p[evens[i].block], fit.p[evens[i].even]);

    char *source = gen_expand(&c);
    if (!source)
        return refuse(why, len, "kernel %s: its source cannot be generated (template missing or out of memory)",
                      f->name);
    char hash[GEN_HASH_LEN];
    gen_source_hash(source, hash);
    free(source);
    if (strcmp(hash, k->source_hash))
        return refuse(why, len, "field 'source_hash': %s is not the hash of the source this flashtune generates "
                      "for this family and these parameters (%s): tuned with other templates, or edited",
                      k->source_hash, hash);
    return 0;
}
