/* Task farm: rank 0 is the master, ranks 1..P-1 are workers. The master hands out --tasks tasks
 * of --task-bytes bytes (tag 1); a worker computes --work flops per task and returns a result of
 * --result-bytes bytes (tag 2 + its task number mod 4, so tags vary). The master takes the next
 * result from any worker with any tag (MPI_Probe with MPI_ANY_SOURCE and MPI_ANY_TAG, then the
 * MPI_Recv of what it found), spends --master-work flops on it, and answers that worker with the
 * next task, or with an empty task (the stop signal) when none is left.
 *
 * Truth: with short tasks (the default: a task costs twice the master's bookkeeping for one
 * result, and there are several workers per task in flight), the master is the bottleneck and the
 * workers spend most of their time waiting in MPI_Recv. Rank 0 computes the most in total.
 *
 * --any-tag makes the master receive directly with MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG). SimGrid
 * 3.32 then writes the receiving end of each result under the wildcard tag (-444) and its own
 * counter, so no result's link end matches its start: readers must report these orphans.
 *
 *   farm [--tasks 60] [--work 1e6] [--master-work 5e5] [--task-bytes 1024] [--result-bytes 256]
 *        [--any-tag] [--work-scale 1] */
#include "common.h"

enum { kTaskTag = 1, kResultTag = 2 };

int main(int argc, char** argv) {
  int rank, size;
  start(&argc, &argv, &rank, &size);
  const int tasks = opt_int(argc, argv, "--tasks", 60);
  const double work = opt_double(argc, argv, "--work", 1e6);
  const double master_work = opt_double(argc, argv, "--master-work", 5e5);
  const int task_bytes = opt_int(argc, argv, "--task-bytes", 1024);
  const int result_bytes = opt_int(argc, argv, "--result-bytes", 256);
  const int any_tag = opt_flag(argc, argv, "--any-tag");
  if (size < 2 || task_bytes < 1) {
    fprintf(stderr, "farm needs at least 2 ranks and a task of at least 1 byte\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char* task = buffer((size_t)task_bytes);
  char* result = buffer((size_t)result_bytes);
  if (rank == 0) {
    int sent = 0;
    int active = 0;
    /* The next task (task_bytes bytes) or the stop signal (an empty task) to worker W. */
#define HAND_OUT(w)                                                                     \
  do {                                                                                  \
    const int more = sent < tasks;                                                      \
    MPI_Send(task, more ? task_bytes : 0, MPI_CHAR, (w), kTaskTag, MPI_COMM_WORLD);     \
    sent += more;                                                                       \
    active += more;                                                                     \
  } while (0)
    for (int w = 1; w < size; ++w) HAND_OUT(w);
    while (active > 0) {
      MPI_Status st;
      if (!any_tag) {
        MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        MPI_Recv(result, result_bytes, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
      } else {
        MPI_Recv(result, result_bytes, MPI_CHAR, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      }
      --active;
      compute(master_work);
      HAND_OUT(st.MPI_SOURCE);
    }
#undef HAND_OUT
  } else {
    for (int done = 0;; ++done) {
      MPI_Status st;
      int got = 0;
      MPI_Recv(task, task_bytes, MPI_CHAR, 0, kTaskTag, MPI_COMM_WORLD, &st);
      MPI_Get_count(&st, MPI_CHAR, &got);
      if (got == 0) break;
      compute(work);
      MPI_Send(result, result_bytes, MPI_CHAR, 0, kResultTag + done % 4, MPI_COMM_WORLD);
    }
  }
  free(task);
  free(result);
  MPI_Finalize();
  return 0;
}
