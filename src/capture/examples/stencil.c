/* An iterative 3-D stencil (Kanoko paper §4.2) as a real MPI program: ranks on an X x Y x Z mesh
 * (no wrap-around) exchange halos with their 6 neighbours every iteration, then compute.
 *
 *   mpirun -np 27 kanoko_example_stencil [--dims 3 3 3] [--iterations 40] [--halo uniform|skewed]
 *                                        [--load light|heavy] [--layer-bytes 8192]
 *                                        [--kill-rank R --kill-at I]
 *
 * Halos follow the paper-program model (docs/paper-programs.md): a cycle of 40 iterations, 24 with
 * 4-layer halos and 16 with 1-layer halos; with --halo skewed the halos between two ranks of the
 * corner octant (all coordinates below half the size, rounded up) are 4 times larger. The compute
 * is a Jacobi sweep over a 24^3 block: 1 sweep per iteration for light, 8 for heavy. Every 10
 * iterations an MPI_Allreduce combines a residual. Each rank prints what it sent and received.
 * --kill-rank R --kill-at I makes rank R kill itself (SIGKILL) at iteration I. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, raise */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BLOCK = 24 };

static int in_hot(int c, int n) { return c < (n + 1) / 2; }

int main(int argc, char** argv) {
  int dims[3] = {3, 3, 3}, iterations = 40, skewed = 0, heavy = 0, layer = 8192, kill_rank = -1, kill_at = -1;
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
  if (dims[0] * dims[1] * dims[2] != size || iterations < 0 || layer < 8) {
    if (rank == 0) fprintf(stderr, "stencil: --dims must multiply to the rank count (%d)\n", size);
    MPI_Finalize();
    return 2;
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
  double* u = malloc(sizeof(double) * BLOCK * BLOCK * BLOCK);
  double* v = malloc(sizeof(double) * BLOCK * BLOCK * BLOCK);
  if (!sendbuf || !recvbuf || !u || !v) MPI_Abort(MPI_COMM_WORLD, 2);
  memset(sendbuf, rank & 0x7f, max_bytes * 6);
  for (int i = 0; i < BLOCK * BLOCK * BLOCK; ++i) u[i] = (double)((i * 7 + rank) % 13);
  long long sent_msgs = 0, sent_bytes = 0, recv_msgs = 0, recv_bytes = 0, colls = 0;
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
      for (int z = 1; z < BLOCK - 1; ++z)
        for (int y = 1; y < BLOCK - 1; ++y)
          for (int x = 1; x < BLOCK - 1; ++x) {
            const int i = x + BLOCK * (y + BLOCK * z);
            v[i] = (u[i - 1] + u[i + 1] + u[i - BLOCK] + u[i + BLOCK] + u[i - BLOCK * BLOCK] + u[i + BLOCK * BLOCK]) / 6.0;
          }
      double* t = u;
      u = v;
      v = t;
    }
    if (it % 10 == 9) {
      double local = u[BLOCK * BLOCK * BLOCK / 2];
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
