/* The GPU architectures flashtune compiles for, in one table: their limits, what a sweep without
 * a GPU assumes of each, and which GPUs run an arch-specific target's code (gen_target_arch: a
 * family's own target_arch says which it needs). Every list of archs in a message or a help text
 * is made from it (gen_arch_names). */
#include <stdio.h>
#include <string.h>

#include "gen_internal.h"

static const gen_arch archs[] = {
    /* name     cc     opt-in shared memory  runs on  a typical GPU (a sweep without one)   SMs */
    { "sm_80", 8, 0, 166912, NULL, "NVIDIA A100-SXM4-80GB", 108 },   /* 163 KiB */
    { "sm_86", 8, 6, 101376, NULL, "NVIDIA A40", 84 },               /* GA10x: 99 KiB */
    { "sm_89", 8, 9, 101376, NULL, "NVIDIA L40S", 142 },             /* AD10x: 99 KiB */
    { "sm_90", 9, 0, 232448, NULL, "NVIDIA H100 80GB HBM3", 132 },   /* 227 KiB */
    /* Arch-specific code (wgmma, setmaxnreg): built for sm_90a, it runs on sm_90 GPUs only. */
    { "sm_90a", 9, 0, 232448, "sm_90", "NVIDIA H100 80GB HBM3", 132 },
};
enum { ARCH_COUNT = sizeof archs / sizeof archs[0] };

const gen_arch *gen_arch_find(const char *name)
{
    for (int i = 0; name && i < ARCH_COUNT; i++)
        if (!strcmp(archs[i].name, name))
            return &archs[i];
    return NULL;
}

const gen_arch *gen_arch_at(int i)
{
    return i >= 0 && i < ARCH_COUNT ? &archs[i] : NULL;
}

void gen_arch_names(int gpus_only, char *buf, size_t len)
{
    size_t at = 0;
    if (len)
        buf[0] = '\0';
    for (int i = 0; i < ARCH_COUNT && at < len; i++)
        if (!gpus_only || !archs[i].runs_on)
            at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", " : "", archs[i].name);
}

int gen_smem_limit_for_arch(const char *arch)
{
    const gen_arch *a = gen_arch_find(arch);
    return a ? a->smem_limit : -1;
}

int gen_arch_supported(const char *arch)
{
    return gen_arch_find(arch) != NULL;
}

const char *gen_target_arch(const gen_family *f, const char *device_arch)
{
    const gen_arch *gpu = gen_arch_find(device_arch);
    if (!f || !gpu)
        return NULL;
    if (!f->target_arch)
        return device_arch;
    const gen_arch *target = gen_arch_find(f->target_arch);
    if (!target)
        return NULL;
    /* The family's target itself, or an arch-specific target built for this GPU's arch. */
    if (target == gpu || (target->runs_on && !strcmp(target->runs_on, gpu->name)))
        return f->target_arch;
    return NULL;
}

int gen_check_arch(const gen_family *f, const char *device_arch, char *why, size_t len)
{
    if (gen_target_arch(f, device_arch))
        return 0;
    snprintf(why, len, "family %s needs a GPU of arch %s; this one is %s", f ? f->name : "(none)",
             f && f->target_arch ? f->target_arch : "(any)", device_arch ? device_arch : "(none)");
    return -1;
}
