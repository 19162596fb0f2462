/* Reproducer: Oclgrind 21.10 is not safe for kernels run at once from
 * several host threads, even with a context, queue, program and buffers of
 * each thread's own. Each thread runs the same small kernel 20 times on
 * 4096 values and checks every result.
 *
 *   cc -o oclgrind_threads tests/repro/oclgrind_threads.c -lOpenCL -lpthread
 *   mkdir -p /tmp/og && echo /usr/lib/oclgrind/liboclgrind-rt-icd.so > /tmp/og/oclgrind.icd
 *   OCL_ICD_VENDORS=/tmp/og ./oclgrind_threads 1    # 0 wrong
 *   OCL_ICD_VENDORS=/tmp/og ./oclgrind_threads 3    # thousands wrong, or a heap abort
 *
 * Seen on Debian 12 (Oclgrind 21.10-3, 2 cores): 1 thread 0 wrong of
 * 81920; 2 threads 1664-4480 wrong; 3 threads 8960-15740 wrong, once
 * "malloc(): unaligned fastbin chunk detected". OCLGRIND_NUM_THREADS=1
 * (one simulator worker) does not help: the state that several host
 * threads' kernel runs share is not its worker pool. PoCL and rusticl run
 * the same program right. Why test_quantiles_combined does not run on
 * Oclgrind (tests/meson.build). Not built: a reproducer to hand upstream. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src =
    "__kernel void k(__global const float *x, __global float *y, uint n, float a) {\n"
    "  uint i = get_global_id(0);\n"
    "  __local float s[64]; s[get_local_id(0)] = i < n ? x[i] * a : 0.0f;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (i < n) y[i] = s[get_local_id(0)] + (float)i; }\n";
static cl_platform_id plat;
static cl_device_id dev;
enum { N = 4096, ROUNDS = 20 };

static void *run(void *arg)
{
    long t = (long)arg, bad = 0;
    cl_int e;
    cl_context c = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    cl_command_queue q = clCreateCommandQueue(c, dev, 0, &e);
    cl_program p = clCreateProgramWithSource(c, 1, &src, NULL, &e);
    clBuildProgram(p, 1, &dev, "", NULL, NULL);
    cl_kernel k = clCreateKernel(p, "k", &e);
    float *x = malloc(N * 4), *y = malloc(N * 4);
    for (int i = 0; i < N; i++) x[i] = (float)(i % 97) + (float)t;
    cl_mem bx = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * 4, x, &e);
    cl_mem by = clCreateBuffer(c, CL_MEM_WRITE_ONLY, N * 4, NULL, &e);
    cl_uint n = N;
    float a = (float)(t + 2);
    for (int r = 0; r < ROUNDS; r++) {
        clSetKernelArg(k, 0, sizeof bx, &bx); clSetKernelArg(k, 1, sizeof by, &by);
        clSetKernelArg(k, 2, sizeof n, &n); clSetKernelArg(k, 3, sizeof a, &a);
        size_t g = N, l = 64;
        clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL);
        clEnqueueReadBuffer(q, by, CL_TRUE, 0, N * 4, y, 0, NULL, NULL);
        for (int i = 0; i < N; i++)
            if (y[i] != x[i] * a + (float)i) bad++;
    }
    printf("thread %ld: %ld wrong values of %d\n", t, bad, N * ROUNDS);
    return (void *)bad;
}

int main(int argc, char **argv)
{
    int nt = argc > 1 ? atoi(argv[1]) : 3;
    clGetPlatformIDs(1, &plat, NULL);
    clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
    pthread_t th[16];
    long bad = 0;
    for (long t = 0; t < nt; t++) pthread_create(&th[t], NULL, run, (void *)t);
    for (int t = 0; t < nt; t++) { void *r; pthread_join(th[t], &r); bad += (long)r; }
    printf("%d threads: %ld wrong\n", nt, bad);
    return bad != 0;
}
