/* The table of scalers, made from clscale.h's list (CLS_SCALERS): each
 * line CLS_SCALER(CLS_X, x) puts the descriptor cls_scaler_x of x.c at the
 * place of CLS_X. Adding a scaler is its descriptor file, its line in that
 * list and, when fused, its branch of cl/scale.cl's MAKE_PARAMS (meson's
 * scaler_sources reads the list too). Also the kernels' scaler codes (the
 * table's order, given to every kernel build as defines), the options a
 * pipeline or a stats file gives the descriptors, and the public name
 * lookups the tool and the Python package use. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "scalers/scaler.h"

#define DECLARE(value, file) extern const cls_scaler_desc cls_scaler_##file;
CLS_SCALERS(DECLARE)
#undef DECLARE

/* by value: the list's order is the enum's, CLS_NONE (0) not in it */
#define ENTRY(value, file) [(value) - 1] = &cls_scaler_##file,
static const cls_scaler_desc *const table[] = {CLS_SCALERS(ENTRY)};
#undef ENTRY
#define NTABLE (sizeof table / sizeof table[0])

const cls_scaler_desc *cls_scaler_get(cls_scaler s)
{
    return (unsigned)s >= 1 && (unsigned)s <= NTABLE ? table[(unsigned)s - 1] : NULL;
}

cls_scaler cls_scaler_of(const cls_scaler_desc *d)
{
    for (size_t i = 0; i < NTABLE; i++)
        if (table[i] == d) return (cls_scaler)(i + 1);
    return CLS_NONE;
}

int cls_scaler_known(cls_scaler s) { return s == CLS_NONE || cls_scaler_get(s) != NULL; }

const cls_scaler_desc *cls_scaler_by_code(uint32_t code)
{
    for (size_t i = 0; i < NTABLE; i++)
        if (table[i]->file_code == code) return table[i];
    return NULL;
}

unsigned cls_scaler_kernel_code(cls_scaler s)
{
    if (s == CLS_NONE) return (unsigned)NTABLE + 1;
    return cls_scaler_get(s) ? (unsigned)s : 0;
}

static char defines[512];
static pthread_once_t defines_once = PTHREAD_ONCE_INIT;

static void make_defines(void)
{
    size_t used = 0;
    for (size_t i = 0; i <= NTABLE && used < sizeof defines; i++)
        used += (size_t)snprintf(defines + used, sizeof defines - used, " -D%s=%zuu",
                                 i < NTABLE ? table[i]->kernel : "CLS_KS_IDENT", i + 1);
}

const char *cls_scaler_kernel_defines(void)
{
    pthread_once(&defines_once, make_defines);
    return defines;
}

cls_params cls_params_with(const cls_column_stats *s, cls_scaler scaler, const cls_scaler_opts *o, int inverse,
                           cls_dtype dtype)
{
    cls_params p = {0.0, 1.0, -0.0}; /* x * 1 + -0.0 is x, -0.0 too */
    const cls_scaler_desc *d = cls_scaler_get(scaler);
    if (!s || s->count == 0 || !d) return p;
    return d->params(s, o, inverse, dtype);
}

cls_params cls_params_of(const cls_column_stats *s, cls_scaler scaler, double lo, double hi, int inverse,
                         cls_dtype dtype)
{
    cls_scaler_opts o;
    memset(&o, 0, sizeof o);
    o.lo = lo;
    o.hi = hi;
    return cls_params_with(s, scaler, &o, inverse, dtype);
}

cls_scaler_opts cls_scaler_opts_of(const cls_pipeline *p)
{
    cls_scaler_opts o;
    memset(&o, 0, sizeof o);
    o.lo = p->lo;
    o.hi = p->hi;
    if (o.lo == 0 && o.hi == 0) o.hi = 1;
    o.center = !p->no_centering;
    o.scale = !p->no_scaling;
    o.unit_variance = p->unit_variance;
    o.qmin = p->qmin;
    o.qmax = p->qmax;
    if (o.qmin == 0 && o.qmax == 0) {
        o.qmin = 25;
        o.qmax = 75;
    }
    return o;
}

cls_scaler_opts cls_scaler_opts_info(const cls_stats_info *info)
{
    cls_scaler_opts o;
    memset(&o, 0, sizeof o);
    o.lo = info->lo;
    o.hi = info->hi;
    if (o.lo == 0 && o.hi == 0) o.hi = 1;
    o.center = !info->no_centering;
    o.scale = !info->no_scaling;
    o.unit_variance = info->unit_variance;
    o.qmin = info->qmin;
    o.qmax = info->qmax;
    return o;
}

const char *cls_scaler_name(cls_scaler s)
{
    const cls_scaler_desc *d = cls_scaler_get(s);
    return d ? d->cli : s == CLS_NONE ? "none" : NULL;
}
