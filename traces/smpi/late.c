/* Late sender: in each of --iters iterations every rank computes, rank 0 the longest (--late
 * times --work flops), rank r >= 1 r times --work; then rank 0 sends --bytes bytes (tag 1) to
 * every other rank, which waits for it in the one MPI_Recv below, and all meet in a barrier.
 *
 * Truth: rank r (1..P-1) waits (late - r) x --work at the MPI_Recv on the line marked RECEIVE
 * (1e7 flops are 10 ms), plus the network's latency, so that receive is where the run waits
 * most: spread over P-1 ranks with min (late - P + 1), mean (late - P/2), max (late - 1) work
 * units per iteration. With P = 4 and the default --late 5: 20, 30 and 40 ms per iteration,
 * imbalance about 4/3. Messages leave eagerly, so the sends do not wait and the barrier waits
 * only for the network (about 2.5 ms per rank and iteration on platforms/flat.xml). Built with `smpicc -trace-call-location`
 * and run with smpi/trace-call-location (generate.sh --locations), each MPI state of the trace
 * carries its file and line (Fname, Lnumber).
 *
 *   late [--iters 3] [--work 1e7] [--late 5] [--bytes 1024] [--work-scale 1] */
#include "common.h"

int main(int argc, char** argv) {
  int rank, size;
  start(&argc, &argv, &rank, &size);
  const int iters = opt_int(argc, argv, "--iters", 3);
  const double work = opt_double(argc, argv, "--work", 1e7);
  const double late = opt_double(argc, argv, "--late", 5);
  const int bytes = opt_int(argc, argv, "--bytes", 1024);
  char* message = buffer((size_t)bytes);
  for (int i = 0; i < iters; ++i) {
    if (rank == 0) {
      compute(late * work);
      for (int r = 1; r < size; ++r) MPI_Send(message, bytes, MPI_CHAR, r, 1, MPI_COMM_WORLD); /* SEND */
    } else {
      compute(rank * work);
      MPI_Recv(message, bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* RECEIVE */
    }
    MPI_Barrier(MPI_COMM_WORLD); /* BARRIER */
  }
  free(message);
  MPI_Finalize();
  return 0;
}
