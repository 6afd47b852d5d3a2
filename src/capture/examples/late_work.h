/* traces/smpi/late.c (a late sender on a known line) under a real MPI: SimGrid's simulated work,
 * smpi_execute_flops(), becomes a wait of flops / 1e9 seconds, the speed of the SMPI test
 * platforms (1 Gflop/s), so that the captured run has the truth the program states (rank r waits
 * (late - r) work units at its MPI_Recv). A wait rather than a busy loop, so that the truth holds
 * on an oversubscribed machine. Put before the program with `-include late_work.h`. */
#ifndef KANOKO_LATE_WORK_H
#define KANOKO_LATE_WORK_H
#define _POSIX_C_SOURCE 200809L
#include <time.h>

static void smpi_execute_flops(double flops) {
  const double s = flops / 1e9;
  struct timespec end;
  clock_gettime(CLOCK_MONOTONIC, &end);
  end.tv_sec += (time_t)s;
  end.tv_nsec += (long)((s - (double)(time_t)s) * 1e9);
  if (end.tv_nsec >= 1000000000L) {
    end.tv_sec += 1;
    end.tv_nsec -= 1000000000L;
  }
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, NULL) != 0) {
  }
}

#endif
