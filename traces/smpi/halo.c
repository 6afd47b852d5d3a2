/* Halo exchange on a --dims-dimensional process grid, as balanced as the rank count allows (16
 * ranks in 2-D give 4 x 4, 9 give 3 x 3, 27 in 3-D give 3 x 3 x 3, 12 in 2-D give 3 x 4);
 * rank = x + nx * (y + ny * z), x fastest. Each of
 * --iters iterations computes --work flops, then exchanges halos with the two neighbours along
 * every axis (MPI_Irecv, MPI_Isend, MPI_Waitall). The grid is periodic unless --open is given.
 * A message along axis a has tag a + 1 (1 = x, 2 = y, 3 = z).
 *
 * Truth: along the skewed axis (--skew-axis, default 0 = x) messages are --skew (default 8)
 * times larger than the --bytes of the other axes, so every neighbour pair on that axis carries
 * --skew times the bytes of a pair on another axis. --work-scale multiplies the computation and
 * leaves every message identical: --work-scale 5 is the heavy run of the same communication.
 * --slow-rank R --slow-factor F makes rank R compute F times the work of the others (an overloaded
 * rank: its neighbours wait for it every iteration).
 *
 *   halo [--dims 2] [--iters 10] [--work 1e6] [--bytes 8192] [--skew 8] [--skew-axis 0] [--open]
 *        [--work-scale 1] [--slow-rank R] [--slow-factor 3] */
#include "common.h"

/* True when N (> 1) has no divisor but 1 and itself. */
static int is_prime(int n) {
  for (int d = 2; d * d <= n; ++d)
    if (n % d == 0) return 0;
  return 1;
}

int main(int argc, char** argv) {
  int rank, size;
  start(&argc, &argv, &rank, &size);
  const int ndims = opt_int(argc, argv, "--dims", 2);
  const int iters = opt_int(argc, argv, "--iters", 10);
  const double work = opt_double(argc, argv, "--work", 1e6);
  const int bytes = opt_int(argc, argv, "--bytes", 8192);
  const int skew = opt_int(argc, argv, "--skew", 8);
  const int skew_axis = opt_int(argc, argv, "--skew-axis", 0);
  const int open = opt_flag(argc, argv, "--open");
  const int slow_rank = opt_int(argc, argv, "--slow-rank", size); /* default: no rank */
  const double slow_factor = opt_double(argc, argv, "--slow-factor", 3);
  if (ndims < 1 || ndims > 3 || skew_axis >= ndims) {
    fprintf(stderr, "halo: --dims must be 1..3 and --skew-axis below it\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  /* A balanced grid, as MPI_Dims_create promises (SMPI 3.32's gives 9 x 1 for 9 ranks): each prime
   * factor of the size, largest first, goes to the axis with the smallest extent so far. */
  int dims[3] = {1, 1, 1};
  for (int rest = size, p = size; rest > 1 && p > 1; --p) {
    while (rest % p == 0 && is_prime(p)) {
      int smallest = 0;
      for (int a = 1; a < ndims; ++a)
        if (dims[a] < dims[smallest]) smallest = a;
      dims[smallest] *= p;
      rest /= p;
    }
  }
  /* This rank's coordinates and its neighbours (-1: none, at the edge of an open grid). */
  int coord[3], stride[3], neighbour[3][2], count[3];
  for (int a = 0, s = 1; a < ndims; s *= dims[a], ++a) {
    stride[a] = s;
    coord[a] = (rank / s) % dims[a];
  }
  for (int a = 0; a < ndims; ++a) {
    count[a] = a == skew_axis ? bytes * skew : bytes;
    for (int d = 0; d < 2; ++d) {
      const int c = coord[a] + (d == 0 ? -1 : 1);
      const int inside = c >= 0 && c < dims[a];
      neighbour[a][d] = !inside && open ? -1 : rank + (((c + dims[a]) % dims[a]) - coord[a]) * stride[a];
    }
  }
  char* out[3][2];
  char* in[3][2];
  for (int a = 0; a < ndims; ++a)
    for (int d = 0; d < 2; ++d) {
      out[a][d] = buffer((size_t)count[a]);
      in[a][d] = buffer((size_t)count[a]);
    }
  MPI_Request req[12];
  for (int it = 0; it < iters; ++it) {
    compute(rank == slow_rank ? work * slow_factor : work);
    int n = 0;
    for (int a = 0; a < ndims; ++a)
      for (int d = 0; d < 2; ++d)
        if (neighbour[a][d] >= 0)
          MPI_Irecv(in[a][d], count[a], MPI_CHAR, neighbour[a][d], a + 1, MPI_COMM_WORLD, &req[n++]);
    for (int a = 0; a < ndims; ++a)
      for (int d = 0; d < 2; ++d)
        if (neighbour[a][d] >= 0)
          MPI_Isend(out[a][d], count[a], MPI_CHAR, neighbour[a][d], a + 1, MPI_COMM_WORLD, &req[n++]);
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
  }
  for (int a = 0; a < ndims; ++a)
    for (int d = 0; d < 2; ++d) {
      free(out[a][d]);
      free(in[a][d]);
    }
  MPI_Finalize();
  return 0;
}
