/* The library beside a discrete GPU, made up by the bus layer
 * (tests/bus_layer.c): POCL_DEVICES="basic pthread", the pthread device
 * behind a modelled bus (the layer's defaults: the H100 machine's figures
 * times 0.1, 5.4 GB/s each way pinned, 0.8-1.1 pageable). It is a staging
 * device (it reports no host-unified memory); on the four workloads,
 * pageable and pinned, every call on the CPU device alone, the modelled
 * GPU alone and both is right (the float64 reference), and the report of a
 * call on both accounts for every slice and says why a device that took
 * none took none.
 *
 * With CLS_BUS_SLOW_CPU set (test bus-pocl1-slowcpu), the same with
 * POCL_DEVICES="pthread pthread", the second behind the bus at the H100
 * machine's rates (scale=1.0), the first a CPU device whose kernels the
 * layer makes 4 times slower (sleeping, so that its core stays free).
 *
 * Nothing here times a call: which way is faster on this model is a
 * benchmark, `clscale bench --model build/tests/libclsbus.so` (CLSBUS set
 * as below for the slowed CPU device), which prints each device alone,
 * both, and the model's ideal team. The scheduler's choice between those
 * ways is tested on given call times in test_team.c
 * (the_fastest_compared_way_runs_the_calls_beside_a_modelled_gpu), and
 * which device takes a slice on given rates in test_plan.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "pipeline_util.h"
#include "reference.h"

/* Which mode this process runs in (main()): beside a modelled GPU, or
 * (CLS_BUS_SLOW_CPU set) beside it with a slowed CPU device. */
static int slow_cpu;

#define SLOW_CPU_MODEL "scale=1.0,nth=1,slow=pthread,slow_nth=0,slow_kernel=4"
static const char *cpu_sel = "basic", *gpu_sel = "pthread";

static void the_modelled_device_stages(void **state)
{
    (void)state;
    cls_context *ctx = test_context(gpu_sel, 0, 0);
    cls_device_info info;
    assert_int_equal(cls_device_get(ctx, 0, &info), CLS_OK);
    assert_int_equal(info.host_unified, 0);
    assert_int_equal(info.staging, 1);
    cls_context_destroy(ctx);
}

typedef struct work {
    const char *name;
    cls_array x;
    cls_array f;      /* factors, or dtype-only placeholder */
    cls_pipeline p;
} work;

static size_t bytes_of(const cls_array *a) { return a->batch * a->rows * a->cols * (a->dtype == CLS_F64 ? 8 : 4); }

/* A copy of x in cls_host_alloc memory of ctx (pinned for its staging device). */
static cls_array pinned_copy(cls_context *ctx, const cls_array *x)
{
    cls_array y = *x;
    assert_int_equal(cls_host_alloc(ctx, bytes_of(x), &y.data), CLS_OK);
    memcpy(y.data, x->data, bytes_of(x));
    return y;
}

static void call_right(cls_context *ctx, work *w, cls_array *in, cls_array *out, const double *want,
                       const char *label)
{
    cls_status st = w->p.scaler == CLS_NONE ? cls_transform(ctx, &w->p, NULL, in, out)
                                            : cls_fit_transform(ctx, &w->p, in, out, NULL);
    if (st != CLS_OK) fail_msg("%s: %s", label, cls_last_error(ctx));
    assert_int_equal(ref_compare(out, want, tol_for(out->dtype), label), 0);
}

/* The report of a call on both devices: every slice done, by one device
 * or the other, and a device that took none says why. */
static void report_accounts_for_every_slice(const cls_context *together, const char *label)
{
    cls_report r;
    assert_int_equal(cls_last_report(together, &r), CLS_OK);
    assert_int_equal(r.ndevices, 2);
    size_t sum = 0;
    for (size_t d = 0; d < r.ndevices; d++) {
        const cls_device_report *dr = &r.devices[d];
        assert_null(dr->failed);
        sum += dr->slices;
        if (dr->slices == 0 && !dr->sat_out) fail_msg("%s: device %zu took no slice and says no why", label, d);
        print_message("# %s: device %zu took %zu slices%s%s\n", label, dr->device, dr->slices,
                      dr->sat_out ? "; " : "", dr->sat_out ? dr->sat_out : "");
    }
    assert_int_equal(r.slices_done, r.slices);
    assert_int_equal(sum, r.slices_done);
}

/* Three calls on each context (the first ones build kernels and try the
 * ways of running a call), pageable and pinned: each right. The contexts
 * share input and output memory where they can, as the bench does. */
static void right_on_every_way(work *w)
{
    size_t n = w->x.batch * w->x.rows * w->x.cols;
    double *want = malloc(n * sizeof *want);
    assert_non_null(want);
    ref_fit_transform(&w->x, &w->p, want, NULL);
    const char *names[3] = {"cpu alone", "modelled gpu alone", "both"};
    for (int pinned = 0; pinned < 2; pinned++) {
        cls_context *ctx[3] = {test_context(cpu_sel, 0, 0), test_context(gpu_sel, 0, 0), test_context(NULL, 0, 0)};
        cls_array in[3], out[3];
        if (pinned) {
            for (int c = 1; c < 3; c++) {
                in[c] = pinned_copy(ctx[c], &w->x);
                out[c] = pinned_copy(ctx[c], &w->x);
            }
            in[0] = in[2];
            out[0] = out[2];
        } else {
            in[0] = ref_copy(&w->x);
            out[0] = ref_copy(&w->x);
            in[1] = in[2] = in[0];
            out[1] = out[2] = out[0];
        }
        for (int k = 0; k < 3; k++)
            for (int c = 0; c < 3; c++) {
                char label[200];
                snprintf(label, sizeof label, "%s, %s, %s, call %d", w->name, pinned ? "pinned" : "pageable",
                         names[c], k + 1);
                memset(out[c].data, 0, bytes_of(&out[c]));
                call_right(ctx[c], w, &in[c], &out[c], want, label);
                if (c == 2) report_accounts_for_every_slice(ctx[2], label);
            }
        if (pinned) {
            for (int c = 1; c < 3; c++) {
                cls_host_free(ctx[c], in[c].data);
                cls_host_free(ctx[c], out[c].data);
            }
        } else {
            ref_free(&in[0]);
            ref_free(&out[0]);
        }
        for (int c = 0; c < 3; c++) cls_context_destroy(ctx[c]);
    }
    free(want);
}

static void seed_a_beside_the_modelled_gpu(void **state)
{
    (void)state;
    work w = {.name = "seed-a (12 x 60 x 9845 float64)", .x = ref_make(CLS_F64, 12, 60, 9845, 1, 0)};
    w.p.scaler = CLS_MINMAX;
    right_on_every_way(&w);
    ref_free(&w.x);
}

static void seed_b_beside_the_modelled_gpu(void **state)
{
    (void)state;
    work w = {.name = "seed-b (400 x 4000 x 5 float64)", .x = ref_make(CLS_F64, 400, 4000, 5, 2, 0)};
    w.f = ref_make_factors(CLS_F64, 1, 4000, 5, 3);
    w.p.factors = &w.f;
    right_on_every_way(&w);
    ref_free(&w.f);
    ref_free(&w.x);
}

static void seed_b_large_beside_the_modelled_gpu(void **state)
{
    (void)state;
    /* its shape: rows of a million columns once merged, cut in column blocks */
    work w = {.name = "seed-b-large (2 x 1000000 x 5 float64)", .x = ref_make(CLS_F64, 2, 1000000, 5, 4, 0)};
    w.f = ref_make_factors(CLS_F64, 1, 1000000, 5, 5);
    w.p.factors = &w.f;
    right_on_every_way(&w);
    ref_free(&w.f);
    ref_free(&w.x);
}

static void table_beside_the_modelled_gpu(void **state)
{
    (void)state;
    work w = {.name = "table (1600000 x 8 float32, batch z-score)", .x = ref_make(CLS_F32, 1, 1600000, 8, 6, 0)};
    w.p.scaler = CLS_ZSCORE;
    w.p.scope = CLS_SCOPE_BATCH;
    right_on_every_way(&w);
    ref_free(&w.x);
}

int main(void)
{
    /* before the first OpenCL call: the ICD loader reads these once */
    const char *layer = getenv("CLS_BUS_LAYER");
    if (!layer) {
        fprintf(stderr, "CLS_BUS_LAYER is not set: run through meson test\n");
        return 1;
    }
    setenv("OPENCL_LAYERS", layer, 1);
    slow_cpu = getenv("CLS_BUS_SLOW_CPU") != NULL;
    if (slow_cpu) {
        cpu_sel = "0";
        gpu_sel = "1";
        /* the layer slows only a pthread device: PoCL 3.1's basic device
         * deadlocks on its gates (bus_layer.c). PoCL's pthread devices
         * share one pool of worker threads: with one thread, the modelled
         * GPU's copies queued behind the CPU device's kernels (its slices
         * took 1.7x as long in a team as alone) */
        setenv("POCL_DEVICES", "pthread pthread", 1);
        setenv("POCL_MAX_PTHREAD_COUNT", "2", 1);
        setenv("CLSBUS", SLOW_CPU_MODEL, 1);
        const struct CMUnitTest team[] = {
            cmocka_unit_test(the_modelled_device_stages),
            cmocka_unit_test(seed_a_beside_the_modelled_gpu),
            cmocka_unit_test(seed_b_beside_the_modelled_gpu),
            cmocka_unit_test(seed_b_large_beside_the_modelled_gpu),
            cmocka_unit_test(table_beside_the_modelled_gpu),
        };
        return TEST_RUN("bus, a slowed cpu device", team, NULL, NULL);
    }
    setenv("POCL_DEVICES", "basic pthread", 1);
    /* one thread each for the CPU device and the modelled GPU's real work */
    setenv("POCL_MAX_PTHREAD_COUNT", "1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_modelled_device_stages),
        cmocka_unit_test(seed_a_beside_the_modelled_gpu),
        cmocka_unit_test(seed_b_beside_the_modelled_gpu),
        cmocka_unit_test(seed_b_large_beside_the_modelled_gpu),
        cmocka_unit_test(table_beside_the_modelled_gpu),
    };
    return TEST_RUN("bus", tests, NULL, NULL);
}
