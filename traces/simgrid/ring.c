/* One token round on a ring of MPI ranks, with a little computation before each send. */
#include <mpi.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, token = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  volatile double work = 0;
  for (int i = 0; i < 20000 * (rank + 1); ++i) work += i * 1e-9;
  if (rank == 0) {
    MPI_Send(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
    MPI_Recv(&token, 1, MPI_INT, size - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&token, 1, MPI_INT, rank - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ++token;
    MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
