/* Pipeline: P stages. Each of --items items enters at rank 0, flows rank 0 -> 1 -> ... -> P-1,
 * and every stage works on it before passing it on (--bytes bytes per message, tag 1).
 *
 * Truth: the work per item is --work flops on every rank except rank --slow (default P/2), which
 * does --factor (default 3) times as much. The slow rank has the largest computing time; the
 * ranks after it wait for it in MPI_Recv. Messages below SMPI's eager limit (64 KiB) leave at
 * once, so the ranks before it never wait.
 *
 *   pipeline [--items 20] [--work 1e6] [--slow P/2] [--factor 3] [--bytes 4096] [--work-scale 1] */
#include "common.h"

int main(int argc, char** argv) {
  int rank, size;
  start(&argc, &argv, &rank, &size);
  const int items = opt_int(argc, argv, "--items", 20);
  const double work = opt_double(argc, argv, "--work", 1e6);
  const int slow = opt_int(argc, argv, "--slow", size / 2);
  const double factor = opt_double(argc, argv, "--factor", 3.0);
  const int bytes = opt_int(argc, argv, "--bytes", 4096);
  char* item = buffer((size_t)bytes);
  const double my_work = rank == slow ? factor * work : work;
  for (int i = 0; i < items; ++i) {
    if (rank > 0) MPI_Recv(item, bytes, MPI_CHAR, rank - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    compute(my_work);
    if (rank + 1 < size) MPI_Send(item, bytes, MPI_CHAR, rank + 1, 1, MPI_COMM_WORLD);
  }
  free(item);
  MPI_Finalize();
  return 0;
}
