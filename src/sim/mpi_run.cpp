#include "src/sim/mpi_run.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <limits>

#include "src/base/error.hpp"
#include "src/base/interrupt.hpp"

namespace kanoko::sim {

namespace {

/// Throws RunError for an MPI error code (the communicator returns errors instead of aborting).
void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw RunError(std::string("MPI ") + what + " failed (" + std::string(text, static_cast<std::size_t>(length)) +
                 "): another rank of the run has probably ended");
}

/// Waits for a non-blocking collective, testing it. A signal (mpirun's SIGTERM when another rank
/// died, Ctrl-C) throws Interrupted rather than waiting on. After 50 tests the pauses between
/// tests double from 2 µs up to 1 ms, so that a rank waiting for a slower one (or for a core the
/// machine gives to someone else) does not keep its own core busy, while a wait stays within about
/// twice its need.
void wait_for(MPI_Request& request, const char* what) {
  long pause_ns = 2'000;
  for (long tests = 0;; ++tests) {
    int done = 0;
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
    if (done != 0) return;
    check_interrupt();
    if (tests > 50) {
      const timespec pause{0, pause_ns};
      nanosleep(&pause, nullptr);
      pause_ns = std::min(2 * pause_ns, 1'000'000L);
    }
  }
}

int checked_int(std::size_t n, const char* what) {
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw RunError(std::string("MPI ") + what + ": more than 2^31 values in one exchange");
  }
  return static_cast<int>(n);
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  return *end == '\0' && x > 0 && x < (1L << 30) ? static_cast<int>(x) : fallback;
}

}  // namespace

int mpi_local_processes() { return env_int("OMPI_COMM_WORLD_LOCAL_SIZE", 1); }

MpiRun::MpiRun(std::string version) : version_(std::move(version)) {
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    throw RunError("cannot start MPI (MPI_Init_thread failed)");
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  counts_.resize(static_cast<std::size_t>(size_));
  displacements_.resize(static_cast<std::size_t>(size_));
}

MpiRun::~MpiRun() { MPI_Finalize(); }

void MpiRun::share(double* values, const std::vector<std::size_t>& bounds, std::size_t stride) {
  for (std::size_t p = 0; p < static_cast<std::size_t>(size_); ++p) {
    counts_[p] = checked_int(stride * (bounds[p + 1] - bounds[p]), "exchange");
    displacements_[p] = checked_int(stride * bounds[p], "exchange");
  }
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, values, counts_.data(), displacements_.data(), MPI_DOUBLE,
                        MPI_COMM_WORLD, &request),
        "exchange of the force sums");
  wait_for(request, "exchange of the force sums");
}

std::vector<std::uint64_t> MpiRun::gather(const std::vector<std::uint64_t>& values) {
  std::vector<std::uint64_t> all(values.size() * static_cast<std::size_t>(size_));
  MPI_Request request = MPI_REQUEST_NULL;
  const int count = checked_int(values.size(), "gather");
  check(MPI_Iallgather(values.data(), count, MPI_UINT64_T, all.data(), count, MPI_UINT64_T, MPI_COMM_WORLD, &request),
        "comparison of the inputs");
  wait_for(request, "comparison of the inputs");
  return all;
}

std::vector<std::string> MpiRun::gather_text(const std::string& text) {
  const std::vector<std::uint64_t> lengths = gather({text.size()});
  std::vector<int> counts(static_cast<std::size_t>(size_)), displacements(static_cast<std::size_t>(size_));
  std::size_t total = 0;
  for (std::size_t p = 0; p < counts.size(); ++p) {
    counts[p] = checked_int(lengths[p], "gather");
    displacements[p] = checked_int(total, "gather");
    total += lengths[p];
  }
  std::string all(total, '\0');
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Iallgatherv(text.data(), checked_int(text.size(), "gather"), MPI_CHAR, all.data(), counts.data(),
                        displacements.data(), MPI_CHAR, MPI_COMM_WORLD, &request),
        "exchange of the messages");
  wait_for(request, "exchange of the messages");
  std::vector<std::string> texts;
  for (std::size_t p = 0; p < counts.size(); ++p) {
    texts.push_back(all.substr(static_cast<std::size_t>(displacements[p]), lengths[p]));
  }
  return texts;
}

void MpiRun::abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; if it did, end anyway
}

}  // namespace kanoko::sim
