/* Shared by the SMPI test programs of this folder: command-line options and simulated work.
 *
 * Options are "--name value" pairs; the last occurrence wins, so a generator can append
 * overrides. Every program accepts --work-scale F, which multiplies all of its computation (not
 * its communication): the same program gives a short or a long, a light or a heavy run.
 *
 * Work is simulated with smpi_execute_flops(): SimGrid charges the flops to the host at the
 * platform's speed, so the trace's durations do not depend on the machine that runs the
 * simulation (run with --cfg=smpi/simulate-computation:no so that the C code between MPI calls
 * costs nothing). Each call appears as one `computing` state with tracing/smpi/computing:yes. */
#ifndef KANOKO_SMPI_COMMON_H
#define KANOKO_SMPI_COMMON_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value of option NAME, or FALLBACK when absent. Exits on a missing or bad value. */
static double opt_double(int argc, char** argv, const char* name, double fallback) {
  double value = fallback;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], name) != 0) continue;
    char* end = NULL;
    if (i + 1 >= argc || (value = strtod(argv[i + 1], &end), *end != '\0' || end == argv[i + 1])) {
      fprintf(stderr, "%s: option %s needs a number\n", argv[0], name);
      exit(2);
    }
  }
  return value;
}

/* Integer option (a non-negative count). */
static int opt_int(int argc, char** argv, const char* name, int fallback) {
  const double v = opt_double(argc, argv, name, fallback);
  if (v < 0 || v != (double)(int)v) {
    fprintf(stderr, "%s: option %s needs a non-negative integer\n", argv[0], name);
    exit(2);
  }
  return (int)v;
}

/* True when flag NAME is present. */
__attribute__((unused))
static int opt_flag(int argc, char** argv, const char* name) {
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], name) == 0) return 1;
  return 0;
}

/* Simulated computation of FLOPS floating-point operations, times the run's work scale. */
static double work_scale = 1.0;
static void compute(double flops) {
  if (flops * work_scale > 0) smpi_execute_flops(flops * work_scale);
}

/* Starts MPI, reads --work-scale, and gives this rank and the number of ranks. */
static void start(int* argc, char*** argv, int* rank, int* size) {
  MPI_Init(argc, argv);
  work_scale = opt_double(*argc, *argv, "--work-scale", 1.0);
  if (!(work_scale > 0)) {
    fprintf(stderr, "%s: --work-scale must be positive\n", (*argv)[0]);
    exit(2);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
}

/* A zeroed buffer of at least BYTES bytes (messages carry no meaningful data). */
static char* buffer(size_t bytes) {
  char* b = calloc(bytes > 0 ? bytes : 1, 1);
  if (b == NULL) {
    fprintf(stderr, "out of memory\n");
    exit(3);
  }
  return b;
}

#endif
