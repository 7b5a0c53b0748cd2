/* The GPU's clocks while a candidate is timed, through NVML opened with dlopen (tune_clocks.h).
 * The handful of NVML entry points used are declared here: the toolkit's headers do not ship
 * nvml.h everywhere, and only their ABI matters (int results, an opaque device handle). */
#include "tune_clocks.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct nvml_device_st *nvml_device;
enum { NVML_OK = 0, NVML_CLOCK_SM = 1 };

struct tune_clocks {
    void *lib;
    nvml_device device;
    int (*shutdown)(void);
    int (*clock_info)(nvml_device device, int type, unsigned *mhz);
    int (*event_reasons)(nvml_device device, unsigned long long *reasons);
};

/* NVML's clock event reasons (nvmlClocksEventReason*), by bit. */
static const struct { unsigned long long bit; const char *name; } reasons[] = {
    { 0x4, "sw_power_cap" },       { 0x8, "hw_slowdown" },         { 0x10, "sync_boost" },
    { 0x20, "sw_thermal" },        { 0x40, "hw_thermal" },         { 0x80, "hw_power_brake" },
    { 0x100, "display_clocks" },
};
/* Bits that say nothing about a timing: the GPU idle between samples, clocks the user set. */
static const unsigned long long QUIET_BITS = 0x1 | 0x2;

tune_clocks *tune_clocks_open(const char *pci_bus_id, char *why, size_t len)
{
    const char *path = getenv("FLASHTUNE_NVML");
    if (!path || !*path)
        path = "libnvidia-ml.so.1";
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(why, len, "no NVML: cannot open %s (%s)", path, e ? e : "dlopen failed");
        return NULL;
    }
    tune_clocks *c = calloc(1, sizeof *c);
    int (*init)(void) = (int (*)(void))dlsym(lib, "nvmlInit_v2");
    int (*by_bus)(const char *, nvml_device *) =
        (int (*)(const char *, nvml_device *))dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    if (c) {
        c->lib = lib;
        c->shutdown = (int (*)(void))dlsym(lib, "nvmlShutdown");
        c->clock_info = (int (*)(nvml_device, int, unsigned *))dlsym(lib, "nvmlDeviceGetClockInfo");
        /* The name since NVML 12.2; the older one where the library predates it. */
        c->event_reasons = (int (*)(nvml_device, unsigned long long *))dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons");
        if (!c->event_reasons)
            c->event_reasons =
                (int (*)(nvml_device, unsigned long long *))dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    }
    int rc = -1;
    if (!c)
        snprintf(why, len, "out of host memory");
    else if (!init || !by_bus || !c->shutdown || !c->clock_info || !c->event_reasons)
        snprintf(why, len, "%s lacks an NVML entry point this needs", path);
    else if ((rc = init()) != NVML_OK)
        snprintf(why, len, "nvmlInit failed (NVML error %d)", rc);
    else if ((rc = by_bus(pci_bus_id, &c->device)) != NVML_OK) {
        snprintf(why, len, "NVML has no GPU at PCI bus id %s (NVML error %d)", pci_bus_id, rc);
        c->shutdown();
        rc = -1;
    }
    if (rc != NVML_OK) {
        free(c);
        dlclose(lib);
        return NULL;
    }
    return c;
}

void tune_clocks_close(tune_clocks *c)
{
    if (!c)
        return;
    c->shutdown();
    dlclose(c->lib);
    free(c);
}

void tune_clock_span_init(tune_clock_span *s)
{
    s->sm_mhz = NAN;
    s->events = -1;
}

void tune_clock_span_add(tune_clock_span *s, unsigned sm_mhz, long long events)
{
    if (isnan(s->sm_mhz) || sm_mhz < s->sm_mhz)
        s->sm_mhz = sm_mhz;
    if (events >= 0)
        s->events = (s->events < 0 ? 0 : s->events) | (long long)((unsigned long long)events & ~QUIET_BITS);
}

int tune_clocks_sample(tune_clocks *c, tune_clock_span *s)
{
    unsigned mhz;
    unsigned long long events;
    if (!c || c->clock_info(c->device, NVML_CLOCK_SM, &mhz) != NVML_OK)
        return -1;
    /* Some GPUs give the clock but not the reasons (NOT_SUPPORTED): the clock still counts. NVML's
     * reasons stop at bit 8, so a known set is never negative. */
    const int known = c->event_reasons(c->device, &events) == NVML_OK;
    tune_clock_span_add(s, mhz, known ? (long long)(events & 0x7fffffffffffffffull) : -1);
    return 0;
}

const char *tune_clock_events_name(long long events, char *buf, size_t len)
{
    char names[256] = "";   /* every name and an unknown rest: under 130 characters */
    if (events >= 0) {
        unsigned long long left = (unsigned long long)events & ~QUIET_BITS;
        for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
            if (left & reasons[i].bit) {
                strcat(strcat(names, names[0] ? "," : ""), reasons[i].name);
                left &= ~reasons[i].bit;
            }
        if (left)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s0x%llx", names[0] ? "," : "", left);
    }
    if (len)
        snprintf(buf, len, "%s", events < 0 ? "-" : names[0] ? names : "none");
    return buf;
}
