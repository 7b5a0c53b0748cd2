/* The clocks recorded beside each timing (tuner/tune_clocks.h) on the CPU: folding samples,
 * naming the reasons, and NVML opened, sampled and refused through a stand-in library
 * (tests/fake_nvml.c, FAKE_NVML and FAKE_NVML_OLD: its two builds). The sampling on a real GPU
 * is test_tune_gpu's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune_clocks.h"

static void spans_fold_samples(void **state)
{
    (void)state;
    tune_clock_span s;
    tune_clock_span_init(&s);
    assert_true(isnan(s.sm_mhz));
    assert_int_equal(s.events, -1);
    tune_clock_span_add(&s, 1830, -1);   /* the clock without the reasons: those stay unknown */
    assert_true(s.sm_mhz == 1830);
    assert_int_equal(s.events, -1);
    tune_clock_span_add(&s, 1980, 0x1);   /* idle only: nothing slowing it */
    assert_true(s.sm_mhz == 1830);
    assert_int_equal(s.events, 0);
    tune_clock_span_add(&s, 1410, 0x4 | 0x2);
    tune_clock_span_add(&s, 1755, 0x40);
    tune_clock_span_add(&s, 1900, -1);
    assert_true(s.sm_mhz == 1410);   /* the least */
    assert_int_equal(s.events, 0x44);   /* every reason seen, the quiet bits left out */
    tune_clock_span_init(&s);
    assert_int_equal(tune_clocks_sample(NULL, &s), -1);   /* no NVML: nothing changes */
    assert_true(isnan(s.sm_mhz));
}

static void reasons_by_name(void **state)
{
    (void)state;
    char buf[128];
    assert_string_equal(tune_clock_events_name(-1, buf, sizeof buf), "-");
    assert_string_equal(tune_clock_events_name(0, buf, sizeof buf), "none");
    assert_string_equal(tune_clock_events_name(0x1 | 0x2, buf, sizeof buf), "none");
    assert_string_equal(tune_clock_events_name(0x24, buf, sizeof buf), "sw_power_cap,sw_thermal");
    assert_string_equal(tune_clock_events_name(0x8 | 0x40 | 0x80, buf, sizeof buf), "hw_slowdown,hw_thermal,hw_power_brake");
    assert_string_equal(tune_clock_events_name(0x4 | 0x400, buf, sizeof buf), "sw_power_cap,0x400");
    assert_string_equal(tune_clock_events_name(0x200, buf, sizeof buf), "0x200");
    assert_string_equal(tune_clock_events_name(0x4 | 0x8 | 0x10 | 0x20 | 0x40 | 0x80 | 0x100, buf, sizeof buf),
                        "sw_power_cap,hw_slowdown,sync_boost,sw_thermal,hw_thermal,hw_power_brake,display_clocks");
    char small[8];
    assert_string_equal(tune_clock_events_name(0x24, small, sizeof small), "sw_powe");   /* cut, terminated */
}

static void opens_and_samples(const char *library)
{
    char why[256] = "";
    setenv("FLASHTUNE_NVML", library, 1);
    assert_null(tune_clocks_open("0000:01:00.0", why, sizeof why));
    assert_non_null(strstr(why, "NVML has no GPU at PCI bus id 0000:01:00.0"));
    tune_clocks *c = tune_clocks_open("0000:3b:00.0", why, sizeof why);
    if (!c)
        fail_msg("%s: %s", library, why);
    tune_clock_span s;
    tune_clock_span_init(&s);
    for (int i = 0; i < 3; i++)
        assert_int_equal(tune_clocks_sample(c, &s), 0);
    assert_true(s.sm_mhz == 1410);
    assert_int_equal(s.events, 0x4);
    /* A GPU that gives its clock but not the reasons: the clock counts, the reasons stay unknown. */
    setenv("FAKE_NVML_NO_REASONS", "1", 1);
    tune_clock_span_init(&s);
    assert_int_equal(tune_clocks_sample(c, &s), 0);
    assert_true(s.sm_mhz > 0);
    assert_int_equal(s.events, -1);
    unsetenv("FAKE_NVML_NO_REASONS");
    tune_clocks_close(c);
    unsetenv("FLASHTUNE_NVML");
}

static void nvml_through_a_stand_in(void **state)
{
    (void)state;
    opens_and_samples(FAKE_NVML);
    opens_and_samples(FAKE_NVML_OLD);   /* the reasons under their older name */
}

static void nvml_missing_or_wrong(void **state)
{
    (void)state;
    char why[256] = "";
    setenv("FLASHTUNE_NVML", "/nonexistent/libnvidia-ml.so.1", 1);
    assert_null(tune_clocks_open("0000:3b:00.0", why, sizeof why));
    assert_non_null(strstr(why, "no NVML: cannot open /nonexistent/libnvidia-ml.so.1"));
    setenv("FLASHTUNE_NVML", "libm.so.6", 1);   /* a library, but not NVML */
    assert_null(tune_clocks_open("0000:3b:00.0", why, sizeof why));
    assert_non_null(strstr(why, "libm.so.6 lacks an NVML entry point"));
    unsetenv("FLASHTUNE_NVML");
    tune_clocks_close(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spans_fold_samples),
        cmocka_unit_test(reasons_by_name),
        cmocka_unit_test(nvml_through_a_stand_in),
        cmocka_unit_test(nvml_missing_or_wrong),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
