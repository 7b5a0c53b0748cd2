/* Content hashes: a kernel's identity (its source) and the CUBIN cache key (64-bit FNV-1a), and
 * the cache identity that the key indexes. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gen_internal.h"

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static uint64_t fnv_bytes(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= FNV_PRIME;
    }
    return h;
}

/* A part of a multi-part key: its length first (8 bytes, little-endian), then its bytes, so
 * ("ab", "c") and ("a", "bc") differ. */
static uint64_t fnv_part(uint64_t h, const char *s)
{
    const uint64_t n = s ? strlen(s) : 0;
    unsigned char len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)(n >> (8 * i));
    h = fnv_bytes(h, len, sizeof len);
    return fnv_bytes(h, s ? s : "", (size_t)n);
}

static void to_hex(uint64_t h, char out[GEN_HASH_LEN])
{
    snprintf(out, GEN_HASH_LEN, "%016llx", (unsigned long long)h);
}

void gen_source_hash(const char *source, char out[GEN_HASH_LEN])
{
    to_hex(fnv_bytes(FNV_OFFSET, source ? source : "", source ? strlen(source) : 0), out);
}

uint64_t gen_bytes_hash(const void *data, size_t n)
{
    return fnv_bytes(FNV_OFFSET, data, n);
}

void gen_cache_key(const char *source, const char *arch, char out[GEN_HASH_LEN])
{
    char version[16];
    gen_nvrtc_version(version, sizeof version);
    uint64_t h = FNV_OFFSET;
    h = fnv_part(h, source);
    h = fnv_part(h, gen_compile_options());
    h = fnv_part(h, arch);
    h = fnv_part(h, version);
    to_hex(h, out);
}

int gen_cache_id_init(const gen_family *f, const char *source, const char *device_arch, gen_cache_id *out)
{
    memset(out, 0, sizeof *out);
    /* The arch NVRTC compiles for, not the device's: one name in the key, the stored row and the
     * lookup (fwd_wgmma on an sm_90 GPU is sm_90a code). */
    const char *arch = gen_target_arch(f, device_arch);
    if (!arch || !source)
        return -1;
    snprintf(out->arch, sizeof out->arch, "%s", arch);
    gen_nvrtc_version(out->nvrtc_version, sizeof out->nvrtc_version);
    out->options = gen_compile_options();
    out->source = source;
    gen_cache_key(source, arch, out->key);
    return 0;
}
