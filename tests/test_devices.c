/* Device discovery and the selector, on whichever implementation the suite
 * enables (see common.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "internal.h"
#include "util/pool.h"

static cls_status try_select(const char *sel, cls_context **ctx)
{
    cls_config cfg = {0};
    cfg.devices = sel;
    return cls_context_create(&cfg, ctx);
}

static size_t count_for(const char *sel)
{
    cls_context *ctx = NULL;
    cls_status st = try_select(sel, &ctx);
    if (st != CLS_OK) print_error("%s: %s\n", sel ? sel : "(default)", cls_last_error(ctx));
    assert_int_equal(st, CLS_OK);
    size_t n = cls_device_count(ctx);
    cls_context_destroy(ctx);
    return n;
}

static size_t expected_devices(void)
{
    if (test_suite_is("pocl")) return 2;
    if (test_suite_is("all")) return 4; /* 2 PoCL, rusticl, Oclgrind */
    return 1;
}

static void every_device_is_described(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    size_t n = cls_device_count(ctx);
    assert_int_equal(n, expected_devices());
    for (size_t i = 0; i < n; i++) {
        cls_device_info d;
        assert_int_equal(cls_device_get(ctx, i, &d), CLS_OK);
        assert_true(strlen(d.name) > 0);
        assert_true(strlen(d.platform) > 0);
        assert_true(strlen(d.driver) > 0);
        assert_true(strlen(d.version) > 0);
        assert_true(d.compute_units > 0);
        assert_true(d.global_mem_bytes > 0);
        assert_true(d.max_alloc_bytes > 0 && d.max_alloc_bytes <= d.global_mem_bytes);
        assert_true(d.type != 0);
        if (!strcmp(d.platform, "rusticl")) assert_false(d.fp64);
        if (!strcmp(d.platform, "Portable Computing Language")) {
            assert_true(d.fp64);
            assert_true(d.host_unified);
        }
        if (!strcmp(d.platform, "Oclgrind")) {
            assert_false(d.host_unified);
            assert_true(d.staging);
        }
    }
    cls_device_info d;
    assert_int_equal(cls_device_get(ctx, n, &d), CLS_E_ARG);
    assert_int_equal(cls_device_get(NULL, 0, &d), CLS_E_ARG);
    assert_int_equal(cls_device_get(ctx, 0, NULL), CLS_E_ARG);
    cls_context_destroy(ctx);
}

static void selector_all_and_empty_take_every_device(void **state)
{
    (void)state;
    assert_int_equal(count_for("all"), expected_devices());
    assert_int_equal(count_for("ALL"), expected_devices());
    assert_int_equal(count_for(""), expected_devices());
    assert_int_equal(count_for(" all , "), expected_devices());
}

static void selector_index_takes_that_device_once(void **state)
{
    (void)state;
    assert_int_equal(count_for("0"), 1);
    assert_int_equal(count_for("0,0"), 1);
    if (expected_devices() > 1) assert_int_equal(count_for("0,1"), 2);

    /* index 1 is the second device listed, or nothing */
    cls_context *ctx = NULL;
    cls_status st = try_select("1", &ctx);
    if (expected_devices() > 1) {
        assert_int_equal(st, CLS_OK);
        cls_device_info d;
        assert_int_equal(cls_device_get(ctx, 0, &d), CLS_OK);
        assert_int_equal(d.index, 1);
    } else {
        assert_int_equal(st, CLS_E_NO_DEVICE);
    }
    cls_context_destroy(ctx);
}

static void selector_substring_is_case_insensitive(void **state)
{
    (void)state;
    if (test_suite_is("pocl") || test_suite_is("pocl1") || test_suite_is("all")) {
        size_t pocl = test_suite_is("pocl1") ? 1 : 2;
        assert_int_equal(count_for("pocl"), pocl);        /* platform vendor "The pocl project" */
        assert_int_equal(count_for("PoCL"), pocl);
        assert_int_equal(count_for("portable"), pocl);     /* platform name */
        assert_int_equal(count_for("pthread"), pocl);      /* device name */
    }
    if (test_suite_is("rusticl") || test_suite_is("all")) {
        assert_int_equal(count_for("rusticl"), 1);
        assert_int_equal(count_for("llvmpipe"), 1);
    }
    if (test_suite_is("oclgrind") || test_suite_is("all")) assert_int_equal(count_for("oclgrind"), 1);
    if (test_suite_is("all")) {
        assert_int_equal(count_for("pocl,rusticl"), 3);
        assert_int_equal(count_for("oclgrind,0"), 1);      /* Oclgrind is listed first */
        assert_int_equal(count_for("cpu"), 3);             /* Oclgrind claims every type: by name only */
        assert_int_equal(count_for("cpu,oclgrind"), 4);
    }
}

/* Types select devices of that one kind: Oclgrind, which claims to be a
 * CPU, a GPU and an accelerator at once, is none of them (by name, index
 * or `all` only), so `gpu` selects no device here and `cpu` the CPUs. */
static void selector_by_type(void **state)
{
    (void)state;
    int sim = test_suite_is("oclgrind");
    if (!sim) assert_int_equal(count_for("cpu"), expected_devices() - (test_suite_is("all") ? 1 : 0));
    const char *none[] = {"gpu", "accelerator", sim ? "cpu" : "gpu"};
    for (size_t i = 0; i < 3; i++) {
        cls_context *ctx = NULL;
        cls_status st = try_select(none[i], &ctx);
        assert_int_equal(st, CLS_E_NO_DEVICE);
        assert_int_equal(cls_device_count(ctx), 0);
        cls_context_destroy(ctx);
    }
}

static void selector_matching_nothing_lists_the_devices(void **state)
{
    (void)state;
    const char *bad[] = {"nvidia", "7", "pocl,nosuchthing", "gpu,cpu,amd-radeon"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (test_suite_is("all") && !strcmp(bad[i], "7")) continue;
        cls_context *ctx = NULL;
        cls_status st = try_select(bad[i], &ctx);
        if (test_suite_is("oclgrind") || test_suite_is("rusticl")) {
            if (!strcmp(bad[i], "pocl,nosuchthing")) {
                assert_int_equal(st, CLS_E_NO_DEVICE);
                assert_non_null(strstr(cls_last_error(ctx), "\"pocl\""));
                cls_context_destroy(ctx);
                continue;
            }
        }
        assert_int_equal(st, CLS_E_NO_DEVICE);
        const char *msg = cls_last_error(ctx);
        assert_non_null(strstr(msg, "matches no device"));
        assert_non_null(strstr(msg, "0: "));               /* the list of devices */
        assert_int_equal(cls_device_count(ctx), 0);
        cls_context_destroy(ctx);
    }
}

static void selector_from_environment(void **state)
{
    (void)state;
    setenv("CLSCALE_DEVICES", "0", 1);
    assert_int_equal(count_for(NULL), 1);
    setenv("CLSCALE_DEVICES", "no-such-device", 1);
    cls_context *ctx = NULL;
    assert_int_equal(try_select(NULL, &ctx), CLS_E_NO_DEVICE);
    cls_context_destroy(ctx);
    unsetenv("CLSCALE_DEVICES");
    /* the configuration wins over the environment */
    setenv("CLSCALE_DEVICES", "no-such-device", 1);
    assert_int_equal(count_for("all"), expected_devices());
    unsetenv("CLSCALE_DEVICES");
}

static void statuses_have_names(void **state)
{
    (void)state;
    for (int s = CLS_OK; s <= CLS_E_FORMAT; s++) assert_non_null(strstr(cls_status_str(s), "CLS_"));
    assert_non_null(strstr(cls_status_str(CLS_E_NO_DEVICE), "CLS_E_NO_DEVICE"));
    assert_non_null(cls_status_str((cls_status)99));
    assert_string_equal(cls_version(), CLS_VERSION_STRING);
    assert_non_null(cls_last_error(NULL));
    cls_context_destroy(NULL);
}

static void forced_staging_is_reported(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, CLS_FORCE_STAGING, 0);
    for (size_t i = 0; i < cls_device_count(ctx); i++) {
        cls_device_info d;
        cls_device_get(ctx, i, &d);
        assert_true(d.staging);
    }
    cls_context_destroy(ctx);
}

/* The switch force_staging (testing.h), a selector, stages the devices it
 * picks, and only those; a selector that matches nothing fails the context
 * and names the switch. */
static void forced_staging_by_selector(void **state)
{
    (void)state;
    cls_context *ctx = NULL;
    assert_int_equal(try_select(NULL, &ctx), CLS_OK);
    size_t n = cls_device_count(ctx);
    cls_context_destroy(ctx);
    cls_tuning t = test_tune;
    for (size_t pick = 0; pick < n; pick++) {
        char sel[32];
        snprintf(sel, sizeof sel, " %zu ", pick);
        t.force_staging = sel;
        cls_tuning_default(&t);
        ctx = NULL;
        cls_status st = try_select(NULL, &ctx);
        if (st != CLS_OK) print_error("%s\n", cls_last_error(ctx));
        assert_int_equal(st, CLS_OK);
        for (size_t i = 0; i < n; i++) {
            cls_device_info d;
            assert_int_equal(cls_device_get(ctx, i, &d), CLS_OK);
            if (i == pick) assert_true(d.staging);
            else if (d.host_unified) assert_false(d.staging);
        }
        cls_context_destroy(ctx);
    }
    t.force_staging = "no-such-device";
    cls_tuning_default(&t);
    ctx = NULL;
    assert_int_equal(try_select(NULL, &ctx), CLS_E_NO_DEVICE);
    assert_non_null(strstr(cls_last_error(ctx), "force_staging"));
    cls_context_destroy(ctx);
    cls_tuning_default(&test_tune);
}

/* The switches (testing.h) a context is created with set its devices'
 * kernel shapes and its copy threads; the context keeps its own copy, which
 * cls_context_tuning() returns, and later contexts take the suite's again. */
static void switches_shape_the_devices_of_a_new_context(void **state)
{
    (void)state;
    cls_tuning t = test_tune;
    t.vec = 2;
    t.kv = 3;
    t.local = 32;
    t.lanes = 8;
    t.copy_threads = 3;
    cls_context *ctx = test_context_tuned(&t, NULL, 0, 0);
    assert_ptr_equal(cls_context_tuning(ctx), &ctx->tune);
    assert_int_equal(ctx->tune.copy_threads, 3);
    assert_int_equal(cls_pool_size(ctx->pool), 3);
    for (size_t i = 0; i < ctx->ndevs; i++) {
        assert_int_equal(ctx->devs[i].vec, 2);
        assert_int_equal(ctx->devs[i].kv, 3);
        assert_int_equal(ctx->devs[i].local, 32);
        assert_int_equal(ctx->devs[i].xw64, 8);
    }
    cls_context *plain = test_context(NULL, 0, 0);
    assert_int_equal(plain->tune.vec, test_tune.vec);
    assert_int_equal(plain->tune.kv, test_tune.kv);
    assert_int_equal(plain->tune.lanes, test_tune.lanes);
    assert_int_equal(plain->tune.copy_threads, test_tune.copy_threads);
    cls_context_destroy(plain);
    cls_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_device_is_described),
        cmocka_unit_test(switches_shape_the_devices_of_a_new_context),
        cmocka_unit_test(selector_all_and_empty_take_every_device),
        cmocka_unit_test(selector_index_takes_that_device_once),
        cmocka_unit_test(selector_substring_is_case_insensitive),
        cmocka_unit_test(selector_by_type),
        cmocka_unit_test(selector_matching_nothing_lists_the_devices),
        cmocka_unit_test(selector_from_environment),
        cmocka_unit_test(statuses_have_names),
        cmocka_unit_test(forced_staging_is_reported),
        cmocka_unit_test(forced_staging_by_selector),
    };
    return TEST_RUN("devices", tests, NULL, NULL);
}
