/* Host values in a dtype: rounding exactly as the device stores values (round to nearest
 * even, as cvt.rn does) and transfers of host doubles to and from device buffers of any dtype. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ln_internal.h"

/* IEEE half and bfloat16 from float, round to nearest even, as cvt.rn does. */
static uint16_t float_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return 0x7fc0;
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static float bf16_to_float(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint16_t float_to_half(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u;
    float a = fabsf(f);
    if (isnan(f))
        return 0x7e00;
    if (a >= 65520.0f)
        return (uint16_t)(sign | 0x7c00u);
    if (a < 6.103515625e-05f) {   /* subnormal: multiples of 2^-24 */
        float q = nearbyintf(a * 16777216.0f);   /* default rounding mode: to nearest even */
        return (uint16_t)(sign | (uint32_t)q);
    }
    uint32_t m = u & 0x7fffffffu;
    uint32_t exp = (m >> 23) - 127 + 15;
    uint32_t mant = m & 0x7fffffu;
    uint32_t h = (exp << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h++;
    return (uint16_t)(sign | h);
}

static float half_to_float(uint16_t h)
{
    uint32_t sign = (h & 0x8000u) ? 1 : 0;
    int exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ffu;
    float v;
    if (exp == 0)
        v = ldexpf((float)mant, -24);
    else if (exp == 31)
        v = mant ? NAN : INFINITY;
    else
        v = ldexpf((float)(mant | 0x400u), exp - 25);
    return sign ? -v : v;
}

double ln_round_to_dtype(int dtype, double x)
{
    switch (dtype) {
    case 0: return (float)x;
    case 1: return half_to_float(float_to_half((float)x));
    case 2: return bf16_to_float(float_to_bf16((float)x));
    default: return x;
    }
}

int ln_upload(const cu_driver *cu, int dtype, CUdeviceptr dst, const double *host, size_t elems, double *rounded)
{
    size_t e = ln_elem_bytes(dtype);
    unsigned char *buf = malloc(elems * e);
    if (!buf)
        return -1;
    for (size_t i = 0; i < elems; i++) {
        double x = host[i];
        switch (dtype) {
        case 0: { float f = (float)x; memcpy(buf + i * 4, &f, 4); x = f; break; }
        case 1: { uint16_t h = float_to_half((float)x); memcpy(buf + i * 2, &h, 2); x = half_to_float(h); break; }
        case 2: { uint16_t h = float_to_bf16((float)x); memcpy(buf + i * 2, &h, 2); x = bf16_to_float(h); break; }
        default: memcpy(buf + i * 8, &x, 8);
        }
        if (rounded)
            rounded[i] = x;
    }
    CUresult rc = cu->MemcpyHtoD(dst, buf, elems * e);
    free(buf);
    return rc == CUDA_SUCCESS ? 0 : -1;
}

int ln_download(const cu_driver *cu, int dtype, CUdeviceptr src, double *host, size_t elems, int acc)
{
    size_t e = acc ? ln_acc_bytes(dtype) : ln_elem_bytes(dtype);
    int kind = acc ? (dtype == 3 ? 3 : 0) : dtype;
    unsigned char *buf = malloc(elems * e);
    if (!buf)
        return -1;
    CUresult rc = cu->MemcpyDtoH(buf, src, elems * e);
    for (size_t i = 0; rc == CUDA_SUCCESS && i < elems; i++) {
        switch (kind) {
        case 0: { float f; memcpy(&f, buf + i * 4, 4); host[i] = f; break; }
        case 1: { uint16_t h; memcpy(&h, buf + i * 2, 2); host[i] = half_to_float(h); break; }
        case 2: { uint16_t h; memcpy(&h, buf + i * 2, 2); host[i] = bf16_to_float(h); break; }
        default: memcpy(&host[i], buf + i * 8, 8);
        }
    }
    free(buf);
    return rc == CUDA_SUCCESS ? 0 : -1;
}
