/* The GPU's clocks while a candidate is timed (prefix tune_clocks): the SM clock and NVML's clock
 * event reasons (power cap, thermal slowdown...), sampled in the worker as each batch of timed
 * runs is queued, so that every stored time says what clocks it ran at. NVML is the driver's
 * own library, opened with dlopen as the CUDA driver is: without it (no GPU, a container without
 * the library) the worker says why once ("C reason", tune_worker.h), the sweep's report repeats
 * it, and the results carry no clocks. */
#ifndef FT_TUNE_CLOCKS_H
#define FT_TUNE_CLOCKS_H

#include <stddef.h>

typedef struct tune_clocks tune_clocks;

/* Opens NVML (libnvidia-ml.so.1, or the file FLASHTUNE_NVML names: the tests point it at a
 * missing one) for the GPU at PCI bus id `pci_bus_id` ("0000:3b:00.0", as the CUDA driver
 * gives it). Returns the handle, or NULL with why saying what was missing. */
tune_clocks *tune_clocks_open(const char *pci_bus_id, char *why, size_t len);
void tune_clocks_close(tune_clocks *c);   /* NULL is fine */

/* The clocks over a timing: the least SM clock sampled (MHz; NAN: no sample) and every clock
 * event reason seen (NVML's bits; -1: no sample). */
typedef struct tune_clock_span {
    double sm_mhz;
    long long events;
} tune_clock_span;

void tune_clock_span_init(tune_clock_span *s);   /* no sample yet */
/* Folds one sample in: the least clock, the union of the reasons (events < 0: the GPU did not
 * say, which leaves the reasons as they were). */
void tune_clock_span_add(tune_clock_span *s, unsigned sm_mhz, long long events);
/* Samples c's GPU now and folds it into s; 0, or -1 when NVML could not give the clock (s
 * unchanged; reasons it does not give are left unknown). c NULL: -1. */
int tune_clocks_sample(tune_clocks *c, tune_clock_span *s);

/* The reasons of `events` that slow a timing, by name ("sw_power_cap,hw_thermal"), "none" when
 * none, "-" when unknown (events < 0); the idle GPU's and the application clock setting's bits
 * are left out, unknown bits named by value ("0x200"). Writes into buf and returns it. */
const char *tune_clock_events_name(long long events, char *buf, size_t len);

#endif
