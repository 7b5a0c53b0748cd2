/* The driver shim: a missing driver is reported clearly, never a crash or a link error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cuda_driver_internal.h"

static void missing_driver_is_reported_by_name(void **state)
{
    (void)state;
    setenv("FLASHTUNE_CUDA_DRIVER", "/nonexistent/libcuda-for-test.so.1", 1);
    const cu_driver *driver = (const cu_driver *)0x1;
    char err[512] = "";
    assert_int_equal(cu_driver_open(&driver, err, sizeof err), -1);
    assert_null(driver);
    assert_non_null(strstr(err, "/nonexistent/libcuda-for-test.so.1"));
    assert_non_null(strstr(err, "no CUDA driver"));
    /* The answer is cached: a second call says the same without retrying. */
    char again[512] = "";
    assert_int_equal(cu_driver_open(&driver, again, sizeof again), -1);
    assert_string_equal(err, again);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(missing_driver_is_reported_by_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
