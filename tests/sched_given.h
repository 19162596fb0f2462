/* The scheduler's time and speeds given by a test (cls_tuning.sched,
 * src/testing.h), so that its decisions on real devices do not depend on
 * how fast anything ran: a clock that moves only by `tick` per slice
 * completed (the progress callback of the contexts given_context makes)
 * and by `probe_cost` per probe, and each device's prior and rate given
 * (bytes/s; the rate replaces any the device shows). One source per
 * process; its functions may run on the library's worker threads. */
#ifndef CLS_SCHED_GIVEN_H
#define CLS_SCHED_GIVEN_H

#include "common.h"

#define GIVEN_DEVS 8

/* Resets the source: the clock at 1000 s, every device's prior and rate
 * `speed`, no probe counted. */
void given_reset(double tick, double probe_cost, double speed);
/* Device d's prior and rate from now on. */
void given_speed(size_t d, double speed);
/* The probes of device d since the reset. */
unsigned given_probes(size_t d);
/* The clock's tick and a probe's cost. */
double given_tick(void);
double given_probe_cost(void);
const cls_sched_source *given_source(void);
/* A context on `devices` (NULL: all) whose scheduler reads the source, with
 * the switches t (NULL: test_tune's); fails the test if it cannot be made. */
cls_context *given_context(const cls_tuning *t, const char *devices, unsigned flags, size_t slice_bytes);

#endif
