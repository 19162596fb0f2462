/* Reproducer: Oclgrind 21.10 runs two instructions of optimised LLVM IR
 * wrongly (unoptimised builds do not contain them), so clip.cl and
 * clip_sort.cl build with -cl-opt-disable there (src/engine/program.c).
 *
 *   cc -o oclgrind_opt tests/repro/oclgrind_opt.c -lOpenCL
 *   mkdir -p /tmp/og && echo /usr/lib/oclgrind/liboclgrind-rt-icd.so > /tmp/og/oclgrind.icd
 *   OCL_ICD_VENDORS=/tmp/og ./oclgrind_opt    # 2 wrong (exit 1)
 *   ./oclgrind_opt                            # PoCL: 0 wrong
 *
 * 1. zext of a vector of i1: `-(v < 1.0f)` (0 minus a vector compare,
 *    -1 where true) is folded by LLVM into `zext <4 x i1> to <4 x i32>`,
 *    1 where true. Oclgrind stores a vector compare's true lanes as all
 *    ones (-1, OpenCL's vector truth) and zero-extends that byte: 255.
 *    clip.cl counts the values below the median with `j -= mask`, which
 *    LLVM turns into the same zext: its MAD merge started 255 times too
 *    far and its spread came out +Inf (test_clip_fast, mad_std).
 * 2. trunc to an odd width: `(flags >> 8) & 7u` compared with constants
 *    becomes `trunc i32 to i3` and a switch on the i3. Oclgrind keeps the
 *    bits above the third (it holds an i3 in a byte), so with a flag at
 *    bit 14 no case matches. clip_sort.cl's fill choice reads so, and its
 *    presorted-window flag is bit 14: its median fill came out NaN
 *    (test_regimes clipping_equals_counting_and_reference, windows sorted
 *    by every work-item).
 * Seen on Debian 12 (Oclgrind 21.10-3, LLVM 14): optimised 255 and -1,
 * -cl-opt-disable 1 and 20; PoCL and rusticl right either way. Not built:
 * a reproducer to hand upstream. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>

static const char *src =
    "__kernel void zext_mask(__global const float *x, __global int *y) {\n"
    "  vstore4(-(vload4(0, x) < (float4)1.0f), 0, y);\n"
    "}\n"
    "__kernel void trunc_i3(__global const uint *x, __global int *y) {\n"
    "  uint f = (x[0] >> 8) & 7u;\n"
    "  int r = -1;\n"
    "  if (f == 4) r = 40; else if (f == 2) r = 20; else if (f == 3) r = 30;\n"
    "  y[0] = r;\n"
    "}\n";

/* Runs `name` on `in` (n bytes) and reads `out` (4 ints) back. */
static int run(cl_context c, cl_command_queue q, cl_program p, const char *name, const void *in, size_t n, int *out)
{
    cl_int e;
    cl_kernel k = clCreateKernel(p, name, &e);
    if (e != CL_SUCCESS) return e;
    cl_mem bx = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n, (void *)in, &e);
    cl_mem by = clCreateBuffer(c, CL_MEM_WRITE_ONLY, 4 * sizeof(int), NULL, &e);
    clSetKernelArg(k, 0, sizeof bx, &bx);
    clSetKernelArg(k, 1, sizeof by, &by);
    size_t one = 1;
    e = clEnqueueNDRangeKernel(q, k, 1, NULL, &one, &one, 0, NULL, NULL);
    if (e == CL_SUCCESS) e = clEnqueueReadBuffer(q, by, CL_TRUE, 0, 4 * sizeof(int), out, 0, NULL, NULL);
    clReleaseMemObject(bx);
    clReleaseMemObject(by);
    clReleaseKernel(k);
    return e;
}

int main(void)
{
    cl_platform_id plat;
    cl_device_id dev;
    cl_int e;
    if (clGetPlatformIDs(1, &plat, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
        return 2;
    cl_context c = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    cl_command_queue q = clCreateCommandQueue(c, dev, 0, &e);
    const char *opts[2] = {"-cl-opt-disable", ""};
    const float x[4] = {0, 2, 0, 2};
    const cl_uint flags = (2u << 8) | (1u << 14); /* field 2 at bits 8-10, another flag at bit 14 */
    int wrong = 0;
    for (int o = 0; o < 2; o++) {
        cl_program p = clCreateProgramWithSource(c, 1, &src, NULL, &e);
        if (clBuildProgram(p, 1, &dev, opts[o], NULL, NULL) != CL_SUCCESS) return 2;
        int y[4] = {7, 7, 7, 7}, f[4] = {7, 7, 7, 7};
        if (run(c, q, p, "zext_mask", x, sizeof x, y) != CL_SUCCESS ||
            run(c, q, p, "trunc_i3", &flags, sizeof flags, f) != CL_SUCCESS)
            return 2;
        int bz = y[0] != 1 || y[1] != 0 || y[2] != 1 || y[3] != 0, bt = f[0] != 20;
        printf("%-16s zext_mask %d %d %d %d (want 1 0 1 0)%s; trunc_i3 %d (want 20)%s\n",
               o ? "optimised:" : "-cl-opt-disable:", y[0], y[1], y[2], y[3], bz ? " WRONG" : "", f[0],
               bt ? " WRONG" : "");
        wrong += bz + bt;
        clReleaseProgram(p);
    }
    clReleaseCommandQueue(q);
    clReleaseContext(c);
    printf("%d wrong\n", wrong);
    return wrong != 0;
}
