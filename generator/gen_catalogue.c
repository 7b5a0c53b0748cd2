/* The template catalogue: the families flashtune knows and their embedded template files. */
#include <string.h>

#include "gen_embedded_internal.h"
#include "gen_internal.h"

/* Each is defined in generator/family_<name>.c, beside its template. */
extern const gen_family gen_family_fwd_mma, gen_family_fwd_wgmma, gen_family_fwd_exact, gen_family_bwd_mma,
    gen_family_bwd_wgmma, gen_family_bwd_wgmma_f32, gen_family_bwd_exact, gen_family_ref;

/* Fixed order: tools print and iterate families in this order. */
static const gen_family *const families[] = {
    &gen_family_fwd_mma, &gen_family_fwd_wgmma, &gen_family_fwd_exact, &gen_family_bwd_mma, &gen_family_bwd_wgmma,
    &gen_family_bwd_wgmma_f32, &gen_family_bwd_exact, &gen_family_ref,
};

const gen_family *const *gen_family_list(int *count)
{
    *count = (int)(sizeof families / sizeof families[0]);
    return families;
}

/* Families added at run time: test-only templates (a kernel that faults, one that never ends)
 * that must go through the real sweep without shipping in the catalogue. */
#define GEN_EXTRA_MAX 8
static const gen_family *extra[GEN_EXTRA_MAX];
static int extra_count;

int gen_family_register(const gen_family *f)
{
    if (!f || !f->name || !f->source || gen_family_find(f->name) || extra_count == GEN_EXTRA_MAX)
        return -1;
    extra[extra_count++] = f;
    return 0;
}

const gen_family *gen_family_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (!strcmp(families[i]->name, name))
            return families[i];
    for (int i = 0; i < extra_count; i++)
        if (!strcmp(extra[i]->name, name))
            return extra[i];
    return NULL;
}

const gen_embedded_file *gen_embedded_find(const char *name)
{
    for (size_t i = 0; i < gen_embedded_count; i++)
        if (!strcmp(gen_embedded_files[i].name, name))
            return &gen_embedded_files[i];
    return NULL;
}

const char *gen_family_template(const gen_family *f)
{
    if (f && f->source)
        return f->source;
    const gen_embedded_file *file = f ? gen_embedded_find(f->file) : NULL;
    return file ? file->data : NULL;
}
