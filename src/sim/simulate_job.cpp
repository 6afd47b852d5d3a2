#include "src/sim/simulate_job.hpp"

#include <utility>

namespace kanoko::sim {

SimulationJob::SimulationJob(SimulateOptions options) : options_(std::move(options)) {
  options_.progress = false;
  options_.cancel = &cancel_;
  options_.on_progress = [this](double f) { progress_ = f; };
  options_.on_writing = [this](const std::filesystem::path& temporary) {
    const std::lock_guard lock(mutex_);
    writing_ = temporary;
  };
  worker_ = std::thread([this] {
    std::optional<SimulateSummary> summary;
    std::exception_ptr failure;
    std::string message;
    try {
      summary = simulate(options_);
    } catch (const std::exception& e) {
      failure = std::current_exception();
      message = cancel_ ? std::string("the simulation was cancelled") : std::string("the simulation failed: ") + e.what();
    }
    {
      const std::lock_guard lock(mutex_);
      summary_ = std::move(summary);
      failure_ = failure;
      message_ = std::move(message);
      if (summary_) writing_ = options_.output;  // renamed into place (or reused)
    }
    progress_ = summary_ ? 1.0 : progress_.load();
    done_ = true;
  });
}

SimulationJob::~SimulationJob() { cancel(); }

std::optional<std::filesystem::path> SimulationJob::writing() const {
  const std::lock_guard lock(mutex_);
  return writing_;
}

std::optional<SimulateSummary> SimulationJob::summary() const {
  const std::lock_guard lock(mutex_);
  return summary_;
}

std::string SimulationJob::problem() const {
  const std::lock_guard lock(mutex_);
  return message_;
}

void SimulationJob::rethrow() const {
  std::exception_ptr failure;
  {
    const std::lock_guard lock(mutex_);
    failure = failure_;
  }
  if (failure) std::rethrow_exception(failure);
}

void SimulationJob::cancel() {
  if (!done_) cancel_ = true;
  wait();
}

void SimulationJob::wait() {
  if (worker_.joinable()) worker_.join();
}

}  // namespace kanoko::sim
