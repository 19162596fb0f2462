/* With no OpenCL driver registered (OCL_ICD_VENDORS at an empty folder), the
 * error names the Debian packages to install. */
#include <stdio.h>
#include <stdlib.h>
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

/* A layer over the API (clscale_mpi.h) reports its own failures in the one
 * channel: a context's message, or the thread's for NULL; the status comes
 * back as given; NULL and "" clear. No driver is needed. */
static void set_error_writes_the_one_channel(void **state)
{
    (void)state;
    cls_context *ctx = NULL;
    assert_int_equal(cls_context_create(NULL, &ctx), CLS_E_NO_DEVICE);
    assert_non_null(ctx);
    assert_int_equal(cls_set_error(ctx, CLS_E_IO, "rank 2 of 4: disk full"), CLS_E_IO);
    assert_string_equal(cls_last_error(ctx), "rank 2 of 4: disk full");
    assert_int_equal(cls_set_error(ctx, CLS_OK, NULL), CLS_OK);
    assert_string_equal(cls_last_error(ctx), "");
    assert_int_equal(cls_set_error(NULL, CLS_E_ARG, "the ranks pass different columns"), CLS_E_ARG);
    assert_string_equal(cls_last_error(NULL), "the ranks pass different columns");
    char *long_text = malloc(20000);
    assert_non_null(long_text);
    memset(long_text, 'x', 19999);
    long_text[19999] = '\0';
    assert_int_equal(cls_set_error(ctx, CLS_E_DEVICE, long_text), CLS_E_DEVICE);
    assert_true(strlen(cls_last_error(ctx)) > 0 && strlen(cls_last_error(ctx)) < 19999); /* cut, terminated */
    free(long_text);
    assert_int_equal(cls_set_error(NULL, CLS_OK, ""), CLS_OK);
    assert_string_equal(cls_last_error(NULL), "");
    cls_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(no_platform_names_the_packages),
                                       cmocka_unit_test(version_string_and_number_agree),
                                       cmocka_unit_test(set_error_writes_the_one_channel)};
    return TEST_RUN("noicd", tests, NULL, NULL);
}
