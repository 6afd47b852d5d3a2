/* All-to-all: --iters iterations of computation (--work flops), an MPI_Alltoall of --bytes bytes
 * per pair of ranks and an MPI_Allreduce of one double (a convergence check).
 *
 * Truth: rank --loaded (default -1: none) computes --imbalance (default 4) times as much as the
 * others; it then has the largest computing time, and every other rank waits for it inside the
 * collectives. Without --loaded all ranks are alike (the balanced control).
 *
 *   alltoall [--iters 10] [--work 1e6] [--bytes 2048] [--loaded -1] [--imbalance 4] [--work-scale 1] */
#include "common.h"

int main(int argc, char** argv) {
  int rank, size;
  start(&argc, &argv, &rank, &size);
  const int iters = opt_int(argc, argv, "--iters", 10);
  const double work = opt_double(argc, argv, "--work", 1e6);
  const int bytes = opt_int(argc, argv, "--bytes", 2048);
  const double loaded = opt_double(argc, argv, "--loaded", -1);
  const double imbalance = opt_double(argc, argv, "--imbalance", 4.0);
  char* out = buffer((size_t)bytes * (size_t)size);
  char* in = buffer((size_t)bytes * (size_t)size);
  for (int it = 0; it < iters; ++it) {
    compute(rank == (int)loaded ? imbalance * work : work);
    MPI_Alltoall(out, bytes, MPI_CHAR, in, bytes, MPI_CHAR, MPI_COMM_WORLD);
    double local = rank, global = 0;
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
