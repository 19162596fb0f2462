/* The embedded kernels build on every device, each in a program of its own
 * when first asked for, and the copy kernel runs correctly there, for
 * float and (where cl_khr_fp64 exists) double. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "internal.h"

static void run_copy(cls_context *ctx, cls_dev *d, cls_dtype t, size_t count)
{
    size_t es = t == CLS_F64 ? 8 : 4;
    unsigned char *in = malloc(count * es), *out = malloc(count * es);
    rng r;
    rng_seed(&r, 42 + count);
    for (size_t i = 0; i < count; i++) {
        double v = rng_range(&r, -1e3, 1e3);
        if (t == CLS_F64) ((double *)in)[i] = v;
        else ((float *)in)[i] = (float)v;
    }
    memset(out, 0xab, count * es);
    cl_int e;
    cl_mem a = clCreateBuffer(d->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, count * es, in, &e);
    assert_int_equal(e, CL_SUCCESS);
    cl_mem b = clCreateBuffer(d->cl, CL_MEM_WRITE_ONLY, count * es, NULL, &e);
    assert_int_equal(e, CL_SUCCESS);
    cl_kernel k = NULL;
    size_t local = 0;
    assert_int_equal(cls_kernel_get(ctx, d, CLS_K_COPY, t, 0, &k, &local, NULL), CLS_OK);
    cl_ulong n = count;
    assert_int_equal(clSetKernelArg(k, 0, sizeof a, &a), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(k, 1, sizeof b, &b), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(k, 2, sizeof n, &n), CL_SUCCESS);
    size_t items = (count + d->vec - 1) / d->vec;
    size_t global = (items + local - 1) / local * local;
    assert_int_equal(clEnqueueNDRangeKernel(d->q[0], k, 1, NULL, &global, &local, 0, NULL, NULL), CL_SUCCESS);
    assert_int_equal(clEnqueueReadBuffer(d->q[0], b, CL_TRUE, 0, count * es, out, 0, NULL, NULL), CL_SUCCESS);
    assert_memory_equal(in, out, count * es);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    free(in);
    free(out);
}

static void copy_kernel_runs_on_every_device(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    for (size_t i = 0; i < ctx->ndevs; i++) {
        cls_dev *d = &ctx->devs[i];
        assert_true(d->alive);
        assert_non_null(d->k[0][CLS_K_COPY][CLS_F32]); /* built with the context */
        size_t sizes[] = {1, 7, 1000, 4099};
        for (size_t s = 0; s < 4; s++) {
            run_copy(ctx, d, CLS_F32, sizes[s]);
            if (d->info.fp64) run_copy(ctx, d, CLS_F64, sizes[s]);
        }
    }
    cls_context_destroy(ctx);
}

/* A context builds the copy kernel only; every other kernel builds when
 * first asked for, once, and float64 ones only where cl_khr_fp64 is. */
static void every_kernel_builds_when_first_needed(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    for (size_t i = 0; i < ctx->ndevs; i++) {
        cls_dev *d = &ctx->devs[i];
        for (int k = 0; k < CLS_K_COUNT; k++)
            for (int t = 0; t < 2; t++)
                if (k != CLS_K_COPY || t != CLS_F32) assert_null(d->k[0][k][t]);
        for (int k = 0; k < CLS_K_COUNT; k++)
            for (int t = 0; t < 2; t++) {
                cl_kernel a = NULL, b = NULL;
                size_t local = 0;
                int built = -1;
                cls_status st = cls_kernel_get(ctx, d, k, (cls_dtype)t, 0, &a, &local, &built);
                if (t == CLS_F64 && !d->info.fp64) {
                    assert_int_equal(st, CLS_E_UNSUPPORTED);
                    assert_null(d->k[0][k][t]);
                    continue;
                }
                if (st != CLS_OK) print_error("%s_%d: %s\n", cls_kernel_names[k], t, cls_last_error(ctx));
                assert_int_equal(st, CLS_OK);
                assert_non_null(a);
                assert_true(local >= 1 && local <= d->local);
                assert_int_equal(built, k != CLS_K_COPY || t != CLS_F32);
                assert_int_equal(cls_kernel_get(ctx, d, k, (cls_dtype)t, 0, &b, NULL, &built), CLS_OK);
                assert_ptr_equal(a, b); /* built once */
                assert_int_equal(built, 0);
                char name[64] = "";
                assert_int_equal(clGetKernelInfo(a, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL), CL_SUCCESS);
                assert_non_null(strstr(name, cls_kernel_names[k]));
                assert_non_null(strstr(name, t == CLS_F64 ? "_f64" : "_f32"));
            }
    }
    cls_context_destroy(ctx);
}

static void build_options_name_the_vector_width(void **state)
{
    (void)state;
    cls_context *ctx = test_context("0", 0, 0);
    char opts[CLS_OPTIONS_LEN];
    cls_program_options(&ctx->devs[0], CLS_K_APPLY, CLS_F64, 0, opts, sizeof opts);
    assert_non_null(strstr(opts, "-DVEC="));
    assert_non_null(strstr(opts, "-DCLS_FP64="));
    assert_non_null(strstr(opts, "-DCLS_REAL_BYTES=8"));
    char want[32];
    snprintf(want, sizeof want, "-DCLS_KERNEL=%d ", (int)CLS_K_APPLY);
    assert_non_null(strstr(opts, want));
    size_t len;
    const char *src = cls_program_source(&len);
    assert_true(len > 1000 && strlen(src) == len);
    assert_non_null(strstr(src, "fit_apply_mm"));
    cls_context_destroy(ctx);
}

/* The scalers' kernel codes come from the table alone: every build defines
 * each descriptor's name with its code (distinct, from 1), and CLS_KS_IDENT
 * (no scaler) after them; the kernel source defines none of them itself. */
static void build_options_define_the_scalers_codes_from_the_table(void **state)
{
    (void)state;
    cls_context *ctx = test_context("0", 0, 0);
    char opts[CLS_OPTIONS_LEN], want[64];
    cls_program_options(&ctx->devs[0], CLS_K_APPLY, CLS_F32, 0, opts, sizeof opts);
    unsigned seen = 0, n = 0;
    for (int s = CLS_NONE + 1; cls_scaler_get((cls_scaler)s); s++, n++) {
        const cls_scaler_desc *d = cls_scaler_get((cls_scaler)s);
        unsigned code = cls_scaler_kernel_code(cls_scaler_of(d));
        assert_true(code >= 1 && code < 32 && !(seen & (1u << code)));
        seen |= 1u << code;
        snprintf(want, sizeof want, "-D%s=%uu ", d->kernel, code);
        if (!strstr(opts, want)) fail_msg("%s: no \"%s\" in \"%s\"", d->name, want, opts);
    }
    assert_true(n >= 5);
    assert_int_equal(cls_scaler_kernel_code(CLS_NONE), n + 1);
    snprintf(want, sizeof want, "-DCLS_KS_IDENT=%uu", n + 1);
    assert_non_null(strstr(opts, want));
    assert_null(strstr(cls_program_source(NULL), "#define CLS_KS_"));
    cls_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(copy_kernel_runs_on_every_device),
        cmocka_unit_test(every_kernel_builds_when_first_needed),
        cmocka_unit_test(build_options_name_the_vector_width),
        cmocka_unit_test(build_options_define_the_scalers_codes_from_the_table),
    };
    return TEST_RUN("kernels", tests, NULL, NULL);
}
