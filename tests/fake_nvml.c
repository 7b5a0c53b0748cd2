/* A stand-in for NVML (libnvidia-ml.so.1) for test_clocks: one GPU at PCI address 0000:3b:00.0
 * whose SM clock steps down 1980, 1755, 1410 MHz, one sample after another, with the idle bit
 * and then a power cap among its clock event reasons (none, NOT_SUPPORTED, with FAKE_NVML_NO_REASONS
 * set). Built twice: with NVML's current name for
 * the reasons' entry point, and (FAKE_NVML_OLD) with the older one only. */
#include <stdlib.h>
#include <string.h>

typedef struct nvml_device_st *nvml_device;
static int device_tag, calls, inits;

int nvmlInit_v2(void)
{
    inits++;
    return 0;
}

int nvmlShutdown(void)
{
    return inits-- > 0 ? 0 : 1;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char *address, nvml_device *device)
{
    if (strcmp(address, "0000:3b:00.0"))
        return 6;   /* NVML_ERROR_NOT_FOUND */
    *device = (nvml_device)&device_tag;
    return 0;
}

int nvmlDeviceGetClockInfo(nvml_device device, int type, unsigned *mhz)
{
    static const unsigned steps[] = { 1980, 1755, 1410 };
    if (device != (nvml_device)&device_tag || type != 1)   /* NVML_CLOCK_SM */
        return 2;   /* NVML_ERROR_INVALID_ARGUMENT */
    *mhz = steps[calls % 3];
    return 0;
}

static int reasons(nvml_device device, unsigned long long *out)
{
    if (device != (nvml_device)&device_tag)
        return 2;
    if (getenv("FAKE_NVML_NO_REASONS")) {   /* a GPU that gives its clock but not why */
        calls++;
        return 3;   /* NVML_ERROR_NOT_SUPPORTED */
    }
    *out = calls++ == 0 ? 0x1 : 0x1 | 0x4;   /* idle, then idle and the software power cap */
    return 0;
}

#ifdef FAKE_NVML_OLD
int nvmlDeviceGetCurrentClocksThrottleReasons(nvml_device device, unsigned long long *out)
{
    return reasons(device, out);
}
#else
int nvmlDeviceGetCurrentClocksEventReasons(nvml_device device, unsigned long long *out)
{
    return reasons(device, out);
}
#endif
