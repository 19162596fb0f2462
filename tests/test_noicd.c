/* With no OpenCL driver registered (OCL_ICD_VENDORS at an empty folder), the
 * error names the Debian packages to install. */
#include <stdio.h>
#include <string.h>

#include "common.h"

static void no_platform_names_the_packages(void **state)
{
    (void)state;
    cls_context *ctx = NULL;
    assert_int_equal(cls_context_create(NULL, &ctx), CLS_E_NO_DEVICE);
    assert_non_null(ctx);
    const char *msg = cls_last_error(ctx);
    assert_non_null(strstr(msg, "no OpenCL platform"));
    assert_non_null(strstr(msg, "pocl-opencl-icd"));
    assert_int_equal(cls_device_count(ctx), 0);
    void *p;
    assert_int_equal(cls_host_alloc(ctx, 64, &p), CLS_E_ARG);
    cls_context_destroy(ctx);
}

/* The library answers its version without any driver: the header's, which
 * the number a program compiled against it compares with spells too. */
static void version_string_and_number_agree(void **state)
{
    (void)state;
    char want[32];
    unsigned n = CLS_VERSION_NUMBER;
    snprintf(want, sizeof want, "%u.%u.%u", n / 10000, n / 100 % 100, n % 100);
    assert_string_equal(cls_version(), want);
    assert_string_equal(cls_version(), CLS_VERSION_STRING);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(no_platform_names_the_packages),
                                       cmocka_unit_test(version_string_and_number_agree)};
    return TEST_RUN("noicd", tests, NULL, NULL);
}
