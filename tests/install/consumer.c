/* A program built against an installed (or subproject) clscale, as a user's
 * would be: includes <clscale.h>, links -lclscale, scales a small array on
 * the devices it finds and checks the result. Prints the version. */
#include <math.h>
#include <stdio.h>

#include <clscale.h>

int main(void)
{
    float x[6] = {1, 10, 2, 20, 3, 30}, y[6];
    cls_context *ctx = NULL;
    cls_status st = cls_context_create(NULL, &ctx);
    if (st != CLS_OK) {
        fprintf(stderr, "consumer: %s: %s\n", cls_status_str(st), cls_last_error(ctx));
        cls_context_destroy(ctx);
        return 1;
    }
    cls_pipeline p = {.scaler = CLS_MINMAX, .lo = 0, .hi = 1};
    cls_array in = {x, CLS_F32, 1, 3, 2}, out = {y, CLS_F32, 1, 3, 2};
    st = cls_fit_transform(ctx, &p, &in, &out, NULL);
    cls_context_destroy(ctx);
    if (st != CLS_OK) return 1;
    const float want[6] = {0, 0, 0.5f, 0.5f, 1, 1};
    for (int i = 0; i < 6; i++)
        if (fabsf(y[i] - want[i]) > 1e-6f) return 1;
    printf("clscale %s\n", cls_version());
    return 0;
}
