/* With no OpenCL driver registered (OCL_ICD_VENDORS at an empty folder), the
 * error names the Debian packages to install. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(no_platform_names_the_packages)};
    return TEST_RUN("noicd", tests, NULL, NULL);
}
