/* The Savitzky-Golay weights of a full window, in float64 on the host:
 * the kernel applies them to its running sums (cl/lightcurve.cl). The
 * normal equations of the polynomial fit, M a = S with M_jk = sum u^(j+k)
 * over the window, give the value (or derivative) at the centre as
 * v^T M^-1 S = g^T S, g = M^-1 v (M is symmetric): one small solve per
 * call instead of one per row. Positions scaled into [-1, 1] keep M well
 * conditioned up to the largest polyorder allowed. */
#include <math.h>
#include <string.h>

#include "lightcurve/lightcurve.h"

double cls_savgol_scale(unsigned w)
{
    double c = (w - 1) / 2.0;
    return c > 1 ? c : 1;
}

int cls_savgol_weights(unsigned w, unsigned p, unsigned deriv, double delta, double *g)
{
    enum { Q = CLS_LC_PMAX + 1 };
    double m[Q][Q], mom[2 * Q], b[Q];
    unsigned q = p + 1;
    double c = (w - 1) / 2.0, s = cls_savgol_scale(w);
    memset(mom, 0, sizeof mom);
    for (unsigned t = 0; t < w; t++) {
        double u = (t - c) / s, pw = 1;
        for (unsigned k = 0; k < 2 * q - 1; k++, pw *= u) mom[k] += pw;
    }
    double fact = 1;
    for (unsigned k = 2; k <= deriv; k++) fact *= k;
    for (unsigned j = 0; j < q; j++) {
        for (unsigned k = 0; k < q; k++) m[j][k] = mom[j + k];
        b[j] = j == deriv ? fact : 0; /* d^deriv/du^deriv of u^j at u = 0 */
    }
    /* Gaussian elimination with partial pivoting */
    for (unsigned k = 0; k < q; k++) {
        unsigned piv = k;
        for (unsigned r = k + 1; r < q; r++)
            if (fabs(m[r][k]) > fabs(m[piv][k])) piv = r;
        if (!(fabs(m[piv][k]) > 1e-14 * fabs(m[0][0]))) return 0;
        if (piv != k) {
            for (unsigned j = 0; j < q; j++) {
                double tmp = m[k][j];
                m[k][j] = m[piv][j];
                m[piv][j] = tmp;
            }
            double tmp = b[k];
            b[k] = b[piv];
            b[piv] = tmp;
        }
        for (unsigned r = k + 1; r < q; r++) {
            double f = m[r][k] / m[k][k];
            for (unsigned j = k; j < q; j++) m[r][j] -= f * m[k][j];
            b[r] -= f * b[k];
        }
    }
    for (unsigned k = q; k-- > 0;) {
        double acc = b[k];
        for (unsigned j = k + 1; j < q; j++) acc -= m[k][j] * b[j];
        b[k] = acc / m[k][k];
    }
    double fac = pow(1.0 / (s * (delta > 0 ? delta : 1)), (double)deriv);
    for (unsigned j = 0; j < q; j++) g[j] = b[j] * fac;
    g[q] = fac;
    return 1;
}
