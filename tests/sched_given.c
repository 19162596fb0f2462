/* The tests' source of the scheduler's time and speeds (sched_given.h). */
#include <pthread.h>

#include "sched_given.h"

static struct {
    pthread_mutex_t  lock;
    cls_sched_source src;
    double           clock, tick, probe_cost;
    double           speed[GIVEN_DEVS];
    unsigned         probes[GIVEN_DEVS];
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

static double now(void *user)
{
    (void)user;
    pthread_mutex_lock(&g.lock);
    double t = g.clock;
    pthread_mutex_unlock(&g.lock);
    return t;
}

/* called on the library's threads: no cmocka assertion here */
static double prior(void *user, size_t d)
{
    (void)user;
    if (d >= GIVEN_DEVS) return 0;
    pthread_mutex_lock(&g.lock);
    g.probes[d]++;
    g.clock += g.probe_cost;
    double v = g.speed[d];
    pthread_mutex_unlock(&g.lock);
    return v;
}

static double rate(void *user, size_t d, double shown)
{
    (void)user;
    if (d >= GIVEN_DEVS) return shown;
    pthread_mutex_lock(&g.lock);
    double v = g.speed[d];
    pthread_mutex_unlock(&g.lock);
    return v;
}

static void tick(void *user, uint64_t done, uint64_t total)
{
    (void)user;
    (void)done;
    (void)total;
    pthread_mutex_lock(&g.lock);
    g.clock += g.tick;
    pthread_mutex_unlock(&g.lock);
}

void given_reset(double tick_s, double probe_cost, double speed)
{
    pthread_mutex_lock(&g.lock);
    g.src = (cls_sched_source){.now = now, .prior = prior, .rate = rate};
    g.clock = 1000.0;
    g.tick = tick_s;
    g.probe_cost = probe_cost;
    for (size_t d = 0; d < GIVEN_DEVS; d++) {
        g.speed[d] = speed;
        g.probes[d] = 0;
    }
    pthread_mutex_unlock(&g.lock);
}

void given_speed(size_t d, double speed)
{
    assert_true(d < GIVEN_DEVS);
    pthread_mutex_lock(&g.lock);
    g.speed[d] = speed;
    pthread_mutex_unlock(&g.lock);
}

unsigned given_probes(size_t d)
{
    assert_true(d < GIVEN_DEVS);
    pthread_mutex_lock(&g.lock);
    unsigned n = g.probes[d];
    pthread_mutex_unlock(&g.lock);
    return n;
}

double given_tick(void) { return g.tick; }
double given_probe_cost(void) { return g.probe_cost; }
const cls_sched_source *given_source(void) { return &g.src; }

cls_context *given_context(const cls_tuning *t, const char *devices, unsigned flags, size_t slice_bytes)
{
    cls_tuning tt = t ? *t : test_tune;
    tt.sched = &g.src;
    cls_tuning_default(&tt);
    cls_config cfg = {.devices = devices, .flags = flags, .slice_bytes = slice_bytes, .progress = tick};
    cls_context *ctx = NULL;
    cls_status st = cls_context_create(&cfg, &ctx);
    cls_tuning_default(&test_tune);
    if (st != CLS_OK) {
        print_error("cls_context_create: %s\n%s\n", cls_status_str(st), cls_last_error(ctx));
        cls_context_destroy(ctx);
        fail();
    }
    return ctx;
}
