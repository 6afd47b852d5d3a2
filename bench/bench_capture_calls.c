/* The MPI program of kanoko_bench_capture (bench_capture.cpp): times a cheap wrapped MPI call,
 * MPI_Test on a null request, made from a few nested functions (so that a call path 4 frames deep
 * has 4 frames to walk), and prints the median nanoseconds per call over several repetitions:
 *   bench_capture_calls [--calls N] [--reps R]   →   "ns_per_call=X"
 * Run with libkanoko-capture preloaded (or not, for the bare call). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The call sites: three levels of noinline functions above the call, one of which loops. */
__attribute__((noinline)) static int call_test(void) {
  MPI_Request req = MPI_REQUEST_NULL;
  int flag = 0;
  MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
  return flag;
}

__attribute__((noinline)) static long loop(long n) {
  long flags = 0;
  for (long i = 0; i < n; ++i) flags += call_test();
  return flags;
}

__attribute__((noinline)) static double timed(long n) {
  const double t0 = now_s();
  const long flags = loop(n);
  const double t1 = now_s();
  if (flags != n) fprintf(stderr, "MPI_Test on a null request did not set flag\n");
  return (t1 - t0) / (double)n;
}

static int compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  long calls = 200000;
  int reps = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--calls") == 0) calls = atol(argv[i + 1]);
    if (strcmp(argv[i], "--reps") == 0) reps = atoi(argv[i + 1]);
  }
  if (calls < 1 || reps < 1 || reps > 100) {
    fprintf(stderr, "usage: bench_capture_calls [--calls N>0] [--reps 1..100]\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  double per_call[100];
  timed(calls / 10 + 1); /* warm-up: the call site is interned, pages touched */
  for (int r = 0; r < reps; ++r) per_call[r] = timed(calls);
  qsort(per_call, (size_t)reps, sizeof per_call[0], compare);
  printf("ns_per_call=%.1f\n", 1e9 * per_call[reps / 2]);
  MPI_Finalize();
  return 0;
}
