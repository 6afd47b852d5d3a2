/* An iterative 3-D stencil (Kanoko paper §4.2) as a real MPI program: ranks on an X x Y x Z mesh
 * (no wrap-around) exchange halos with their 6 neighbours every iteration, then compute.
 *
 *   mpirun -np 27 kanoko_example_stencil [--dims 3 3 3] [--iterations 40] [--halo uniform|skewed]
 *                                        [--load light|heavy] [--layer-bytes 8192] [--block 24]
 *                                        [--sleep-us N] [--period-ms P] [--kill-rank R --kill-at I]
 *
 * Halos follow the paper-program model (docs/paper-programs.md): a cycle of 40 iterations, 24 with
 * 4-layer halos and 16 with 1-layer halos; with --halo skewed the halos between two ranks of the
 * corner octant (all coordinates below half the size, rounded up) are 4 times larger. The compute
 * is a Jacobi sweep over a block of --block^3 points (default 24^3): 1 sweep per iteration for
 * light, 8 for heavy. Every 10 iterations an MPI_Allreduce combines a residual. Each rank prints
 * what it sent and received. --kill-rank R --kill-at I makes rank R kill itself (SIGKILL) at
 * iteration I.
 *
 * Running like the paper's machine on a small host (27 ranks on 2 cores):
 *   --sleep-us N  each sweep is a timed wait of N microseconds instead, so that ranks compute at
 *                 once however few cores there are (with OMPI_MCA_mpi_yield_when_idle=1, so that
 *                 MPI yields the CPU while it waits);
 *   --period-ms P iterations start every P ms, as in a time-stepped code that advances on a
 *                 barrier: one more rank than the mesh has (the last) is a clock that sleeps to
 *                 each period's end and then joins an MPI_Barrier, in which the mesh ranks wait
 *                 once they have computed. Light and heavy runs then exchange the same halos at
 *                 the same times and differ only in the time the ranks spend outside MPI. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, raise */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int in_hot(int c, int n) { return c < (n + 1) / 2; }

static void pause_us(int us) {
  const struct timespec d = {us / 1000000, (long)(us % 1000000) * 1000L};
  nanosleep(&d, NULL);
}

int main(int argc, char** argv) {
  int period_ms = 0;
  int dims[3] = {3, 3, 3}, iterations = 40, block = 24, sleep_us = 0, skewed = 0, heavy = 0, layer = 8192, kill_rank = -1, kill_at = -1;
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--dims") == 0 && i + 3 < argc) {
      for (int a = 0; a < 3; ++a) dims[a] = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      iterations = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--layer-bytes") == 0 && i + 1 < argc) {
      layer = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--halo") == 0 && i + 1 < argc) {
      skewed = strcmp(argv[++i], "skewed") == 0;
    } else if (strcmp(argv[i], "--period-ms") == 0 && i + 1 < argc) {
      period_ms = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--sleep-us") == 0 && i + 1 < argc) {
      sleep_us = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--block") == 0 && i + 1 < argc) {
      block = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--load") == 0 && i + 1 < argc) {
      heavy = strcmp(argv[++i], "heavy") == 0;
    } else if (strcmp(argv[i], "--kill-rank") == 0 && i + 1 < argc) {
      kill_rank = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--kill-at") == 0 && i + 1 < argc) {
      kill_at = atoi(argv[++i]);
    } else {
      if (rank == 0) fprintf(stderr, "stencil: unknown argument '%s'\n", argv[i]);
      MPI_Finalize();
      return 2;
    }
  }
  const int mesh_size = size - (period_ms > 0 ? 1 : 0);
  if (dims[0] * dims[1] * dims[2] != mesh_size || iterations < 0 || layer < 8 || block < 3 || block > 512 ||
      sleep_us < 0 || period_ms < 0) {
    if (rank == 0) {
      fprintf(stderr,
              "stencil: --dims must multiply to the rank count (%d, less the clock rank with --period-ms), "
              "--layer-bytes be at least 8, --block 3..512, --sleep-us and --period-ms at least 0\n",
              size);
    }
    MPI_Finalize();
    return 2;
  }
  long long sent_msgs = 0, sent_bytes = 0, recv_msgs = 0, recv_bytes = 0, colls = 0;
  if (rank == mesh_size) { /* the clock of --period-ms */
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (int it = 0; it < iterations; ++it) {
      next.tv_nsec += (long)period_ms * 1000000L;
      next.tv_sec += next.tv_nsec / 1000000000L;
      next.tv_nsec %= 1000000000L;
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
      MPI_Barrier(MPI_COMM_WORLD);
      ++colls;
      if (it % 10 == 9) {
        double none = 0, sum = 0;
        MPI_Allreduce(&none, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        ++colls;
      }
    }
    printf("kanoko-example rank=%d sent_msgs=0 sent_bytes=0 recv_msgs=0 recv_bytes=0 collectives=%lld\n", rank, colls);
    fflush(stdout);
    MPI_Finalize();
    return 0;
  }
  const int c[3] = {rank % dims[0], (rank / dims[0]) % dims[1], rank / (dims[0] * dims[1])};
  const int hot = in_hot(c[0], dims[0]) && in_hot(c[1], dims[1]) && in_hot(c[2], dims[2]);
  int nb[6], nnb = 0, nb_axis[6];
  for (int a = 0; a < 3; ++a) {
    for (int d = -1; d <= 1; d += 2) {
      int q[3] = {c[0], c[1], c[2]};
      q[a] += d;
      if (q[a] < 0 || q[a] >= dims[a]) continue;
      nb_axis[nnb] = a;
      nb[nnb++] = q[0] + dims[0] * (q[1] + dims[1] * q[2]);
    }
  }
  const size_t max_bytes = (size_t)layer * 4 * 4;
  char* sendbuf = malloc(max_bytes * 6);
  char* recvbuf = malloc(max_bytes * 6);
  const size_t cells = (size_t)block * (size_t)block * (size_t)block;
  double* u = malloc(sizeof(double) * cells);
  double* v = malloc(sizeof(double) * cells);
  if (!sendbuf || !recvbuf || !u || !v) MPI_Abort(MPI_COMM_WORLD, 2);
  memset(sendbuf, rank & 0x7f, max_bytes * 6);
  for (size_t i = 0; i < cells; ++i) u[i] = (double)((i * 7 + (size_t)rank) % 13);
  double residual = 0;
  for (int it = 0; it < iterations; ++it) {
    if (rank == kill_rank && it == kill_at) raise(SIGKILL);
    const int depth = it % 40 < 24 ? 4 : 1;
    MPI_Request req[12];
    for (int k = 0; k < nnb; ++k) {
      const int q = nb[k];
      const int qc[3] = {q % dims[0], (q / dims[0]) % dims[1], q / (dims[0] * dims[1])};
      const int both_hot = hot && in_hot(qc[0], dims[0]) && in_hot(qc[1], dims[1]) && in_hot(qc[2], dims[2]);
      const int bytes = layer * depth * (skewed && both_hot ? 4 : 1);
      MPI_Irecv(recvbuf + (size_t)k * max_bytes, bytes, MPI_BYTE, q, 1 + nb_axis[k], MPI_COMM_WORLD, &req[k]);
      MPI_Isend(sendbuf + (size_t)k * max_bytes, bytes, MPI_BYTE, q, 1 + nb_axis[k], MPI_COMM_WORLD, &req[nnb + k]);
      sent_msgs += 1;
      sent_bytes += bytes;
      recv_msgs += 1;
      recv_bytes += bytes;
    }
    MPI_Waitall(2 * nnb, req, MPI_STATUSES_IGNORE);
    for (int s = 0; s < (heavy ? 8 : 1); ++s) {
      if (sleep_us > 0) {
        pause_us(sleep_us);
        continue;
      }
      for (int z = 1; z < block - 1; ++z)
        for (int y = 1; y < block - 1; ++y)
          for (int x = 1; x < block - 1; ++x) {
            const int i = x + block * (y + block * z);
            v[i] = (u[i - 1] + u[i + 1] + u[i - block] + u[i + block] + u[i - block * block] + u[i + block * block]) / 6.0;
          }
      double* t = u;
      u = v;
      v = t;
    }
    if (period_ms > 0) {
      MPI_Barrier(MPI_COMM_WORLD); /* waits for the clock: the rest of the period */
      ++colls;
    }
    if (it % 10 == 9) {
      double local = u[cells / 2];
      MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      ++colls;
    }
  }
  if (rank == 0) printf("kanoko-example stencil dims=%dx%dx%d iterations=%d residual=%g\n", dims[0], dims[1], dims[2], iterations, residual);
  printf("kanoko-example rank=%d sent_msgs=%lld sent_bytes=%lld recv_msgs=%lld recv_bytes=%lld collectives=%lld\n", rank,
         sent_msgs, sent_bytes, recv_msgs, recv_bytes, colls);
  fflush(stdout);
  free(sendbuf);
  free(recvbuf);
  free(u);
  free(v);
  MPI_Finalize();
  return 0;
}
