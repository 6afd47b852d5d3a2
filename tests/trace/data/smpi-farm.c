/* A task farm: rank 0 hands out work, receives results with MPI_ANY_TAG; then a bcast, an
   allreduce and a barrier. */
#include <mpi.h>
int main(int argc, char** argv) {
  int rank, size, i, v = 0, sum = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    for (i = 1; i < size; ++i) MPI_Send(&i, 1, MPI_INT, i, 7, MPI_COMM_WORLD);
    for (i = 1; i < size; ++i) MPI_Recv(&v, 1, MPI_INT, i, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    double x = 0;
    MPI_Recv(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (i = 0; i < 100000 * rank; ++i) x += i * 0.5;
    v = (int)x;
    MPI_Send(&v, 1, MPI_INT, 0, 40 + rank, MPI_COMM_WORLD);
  }
  MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
