/* The paper's Fibonacci (Kanoko paper §4.1) as a real MPI program: a message-driven fib(n) where
 * every call fib(k), k >= 2, sends its two child calls to other ranks chosen by a distribution
 * method and waits for their replies.
 *
 *   mpirun -np 8 kanoko_example_fibonacci [--n 18] [--distribution random|ring|torus] [--seed 1]
 *                                         [--work-us 20] [--sleep] [--skip-finalize]
 *
 * random: each child to a rank drawn uniformly from the other ranks; ring: both children to
 * (rank + 1) mod P; torus: on an R x C torus (R <= C, R as large as possible, R, C >= 2), fib(k-1)
 * to the right neighbour and fib(k-2) to the down neighbour. Every message is 40 bytes (tag 1 a
 * call, tag 2 a reply, tag 3 the final stop). Each rank prints what it sent and received, so a
 * tracer can be checked against the program's own counts. Each call works --work-us microseconds
 * (on arrival, and again when its two replies are in), spinning, or waiting with --sleep (with
 * OMPI_MCA_mpi_yield_when_idle=1, 8 ranks on a 2-core host then behave like 8 processors).
 * --skip-finalize returns from main
 * without MPI_Finalize (to test partial traces). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, raise */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TAG_CALL = 1, TAG_REPLY = 2, TAG_STOP = 3, WORDS = 5, POOL = 64 };

typedef struct {
  int64_t sum;
  int pending;
  int parent_rank;
  int64_t parent_slot;
} Slot;

static int rank_, size_, method_, rows_, cols_, work_us_, sleep_;
static uint64_t rng_;
static Slot* slots_;
static int64_t nslots_, free_head_ = -1, *free_next_;
static int64_t sent_msgs_, sent_bytes_, recv_msgs_, recv_bytes_;
static int64_t send_buf_[POOL][WORDS];
static MPI_Request send_req_[POOL];
static int nsend_;

static uint64_t next_random(void) { /* SplitMix64 */
  uint64_t z = (rng_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* The work of one call: a spin on the CPU, or with --sleep a timed wait, which lets more ranks
 * than cores work at once (an oversubscribed host then behaves like one core per rank). */
static void busy(int us) {
  if (sleep_) {
    const struct timespec d = {us / 1000000, (long)(us % 1000000) * 1000L};
    nanosleep(&d, NULL);
    return;
  }
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do {
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000L < us);
}

static void send_words(int dest, int tag, int64_t a, int64_t b, int64_t c) {
  if (nsend_ == POOL) {
    MPI_Waitall(POOL, send_req_, MPI_STATUSES_IGNORE);
    nsend_ = 0;
  }
  int64_t* w = send_buf_[nsend_];
  w[0] = a;
  w[1] = b;
  w[2] = c;
  w[3] = 0;
  w[4] = 0;
  MPI_Isend(w, WORDS, MPI_INT64_T, dest, tag, MPI_COMM_WORLD, &send_req_[nsend_++]);
  sent_msgs_ += 1;
  sent_bytes_ += WORDS * (int64_t)sizeof(int64_t);
}

static int child_rank(int which) {
  if (method_ == 0) { /* random among the other ranks, unbiased */
    const uint64_t n = (uint64_t)(size_ - 1), limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = next_random(); while (x >= limit);
    const int r = (int)(x % n);
    return r >= rank_ ? r + 1 : r;
  }
  if (method_ == 1) return (rank_ + 1) % size_;
  const int row = rank_ / cols_, col = rank_ % cols_;
  return which == 0 ? row * cols_ + (col + 1) % cols_ : ((row + 1) % rows_) * cols_ + col;
}

static int64_t new_slot(void) {
  if (free_head_ >= 0) {
    const int64_t s = free_head_;
    free_head_ = free_next_[s];
    return s;
  }
  if (nslots_ % 1024 == 0) {
    slots_ = realloc(slots_, (size_t)(nslots_ + 1024) * sizeof *slots_);
    free_next_ = realloc(free_next_, (size_t)(nslots_ + 1024) * sizeof *free_next_);
    if (slots_ == NULL || free_next_ == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return nslots_++;
}

/* Returns 1 when the root's value is known (rank 0 only). */
static int reply(int parent_rank, int64_t parent_slot, int64_t value, int64_t* result) {
  if (parent_rank < 0) {
    *result = value;
    return 1;
  }
  send_words(parent_rank, TAG_REPLY, value, parent_slot, 0);
  return 0;
}

static int call(int64_t k, int parent_rank, int64_t parent_slot, int64_t* result) {
  busy(work_us_);
  if (k < 2) return reply(parent_rank, parent_slot, k, result);
  const int64_t s = new_slot();
  slots_[s].sum = 0;
  slots_[s].pending = 2;
  slots_[s].parent_rank = parent_rank;
  slots_[s].parent_slot = parent_slot;
  send_words(child_rank(0), TAG_CALL, k - 1, rank_, s);
  send_words(child_rank(1), TAG_CALL, k - 2, rank_, s);
  return 0;
}

int main(int argc, char** argv) {
  int n = 18, seed = 1, skip_finalize = 0;
  work_us_ = 20;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
      n = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      seed = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--work-us") == 0 && i + 1 < argc) {
      work_us_ = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--sleep") == 0) {
      sleep_ = 1;
    } else if (strcmp(argv[i], "--skip-finalize") == 0) {
      skip_finalize = 1;
    } else if (strcmp(argv[i], "--distribution") == 0 && i + 1 < argc) {
      ++i;
      method_ = strcmp(argv[i], "random") == 0 ? 0 : strcmp(argv[i], "ring") == 0 ? 1 : strcmp(argv[i], "torus") == 0 ? 2 : -1;
      if (method_ < 0) {
        if (rank_ == 0) fprintf(stderr, "fibonacci: --distribution must be random, ring or torus\n");
        MPI_Finalize();
        return 2;
      }
    } else {
      if (rank_ == 0) fprintf(stderr, "fibonacci: unknown argument '%s'\n", argv[i]);
      MPI_Finalize();
      return 2;
    }
  }
  if (size_ < 2 || n < 0 || n > 30 || work_us_ < 0) {
    if (rank_ == 0) fprintf(stderr, "fibonacci: needs at least 2 ranks, 0 <= n <= 30, --work-us >= 0\n");
    MPI_Finalize();
    return 2;
  }
  if (method_ == 2) {
    for (int r = 2; r * r <= size_; ++r) {
      if (size_ % r == 0) rows_ = r;
    }
    cols_ = rows_ > 0 ? size_ / rows_ : 0;
    if (rows_ < 2 || cols_ < 2) {
      if (rank_ == 0) fprintf(stderr, "fibonacci: torus needs a rank count R x C with R, C >= 2\n");
      MPI_Finalize();
      return 2;
    }
  }
  rng_ = (uint64_t)seed * 1000003u + (uint64_t)rank_;
  int64_t result = -1;
  int done = rank_ == 0 ? call(n, -1, -1, &result) : 0;
  while (!done) {
    int64_t w[WORDS];
    MPI_Status st;
    MPI_Recv(w, WORDS, MPI_INT64_T, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    recv_msgs_ += 1;
    recv_bytes_ += WORDS * (int64_t)sizeof(int64_t);
    if (st.MPI_TAG == TAG_STOP) break;
    if (st.MPI_TAG == TAG_CALL) {
      done = call(w[0], (int)w[1], w[2], &result);
    } else {
      Slot* s = &slots_[w[1]];
      s->sum += w[0];
      if (--s->pending == 0) {
        busy(work_us_);
        done = reply(s->parent_rank, s->parent_slot, s->sum, &result);
        free_next_[w[1]] = free_head_;
        free_head_ = w[1];
      }
    }
  }
  if (rank_ == 0) {
    for (int r = 1; r < size_; ++r) send_words(r, TAG_STOP, 0, 0, 0);
  }
  MPI_Waitall(nsend_, send_req_, MPI_STATUSES_IGNORE);
  if (rank_ == 0) printf("kanoko-example fibonacci n=%d value=%lld\n", n, (long long)result);
  printf("kanoko-example rank=%d sent_msgs=%lld sent_bytes=%lld recv_msgs=%lld recv_bytes=%lld collectives=1\n", rank_,
         (long long)sent_msgs_, (long long)sent_bytes_, (long long)recv_msgs_, (long long)recv_bytes_);
  fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  free(slots_);
  free(free_next_);
  if (skip_finalize) return 0;
  MPI_Finalize();
  return 0;
}
