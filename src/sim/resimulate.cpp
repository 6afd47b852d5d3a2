#include "src/base/background.hpp"
#include "src/sim/resimulate.hpp"

#include <cstdio>
#include <system_error>
#include <utility>

#include "src/base/atomic_file.hpp"
#include "src/base/error.hpp"
#include "src/mapping/edit.hpp"
#include "src/mapping/mapping.hpp"
#include "src/sim/simulate.hpp"

namespace kanoko::sim {

Resimulation::Resimulation(const trajectory::Reader& run, std::filesystem::path work_folder)
    : trace_(run.meta().source_trace),
      mapping_name_(run.meta().source_mapping),
      folder_(std::move(work_folder)),
      text_(run.meta().mapping_text) {
  try {
    parameters_ = mapping::tunables(text_, mapping_name_);
  } catch (const std::exception& e) {
    // A run whose stored mapping no longer parses (written by another version): nothing to tune.
    error_ = std::string("parameters cannot be changed: ") + e.what();
  }
}

Resimulation::~Resimulation() {
  stop();
  std::error_code ec;
  std::filesystem::remove_all(folder_, ec);  // best effort: a leftover temporary folder is harmless
}

void Resimulation::stop() {
  cancel_ = true;
  if (worker_.joinable()) worker_.join();
  cancel_ = false;
  running_ = false;
}

void Resimulation::change(std::size_t index, double factor, const trajectory::Reader& shown, std::size_t frame) {
  if (index >= parameters_.size()) return;
  stop();
  mapping::Tunable& p = parameters_[index];
  p.value *= factor;
  const mapping::Mapping current = mapping::parse_mapping_text(text_, mapping_name_);
  text_ = mapping::set_value(text_, current, p.section, p.key, mapping::toml_float(p.value));
  edited_ = true;
  {
    const std::lock_guard lock(mutex_);
    error_.clear();
    finished_.reset();
  }
  std::error_code ec;
  std::filesystem::create_directories(folder_, ec);
  SimulateOptions o;
  o.trace = trace_;
  o.mapping = mapping_name_;
  o.mapping_text = text_;
  o.output = folder_ / ("run-" + std::to_string(++runs_started_) + ".kntj");
  o.force = true;
  o.progress = false;
  o.resume_from = &shown;
  o.resume_frame = frame;
  o.cancel = &cancel_;
  o.on_progress = [this](double f) { progress_ = f; };
  progress_ = 0;
  running_ = true;
  worker_ = std::thread([this, o] {
    (void)lower_thread_priority();  // the viewer keeps playing meanwhile
    std::string failure;
    std::unique_ptr<trajectory::Reader> result;
    try {
      std::error_code exists_ec;
      if (!std::filesystem::exists(o.trace, exists_ec)) {
        throw InputError(FileLoc{o.trace.string()},
                         "the run's trace is not found from this folder; start the viewer where you ran "
                         "'kanoko simulate' to re-simulate");
      }
      simulate(o);
      result = std::make_unique<trajectory::Reader>(o.output);
    } catch (const std::exception& e) {
      if (!cancel_) failure = e.what();
    }
    const std::lock_guard lock(mutex_);
    finished_ = std::move(result);
    error_ = std::move(failure);
    running_ = false;
  });
}

std::optional<double> Resimulation::progress() const {
  if (!running_) return std::nullopt;
  return progress_.load();
}

const trajectory::Reader* Resimulation::take_finished() {
  const std::lock_guard lock(mutex_);
  if (!finished_) return nullptr;
  shown_runs_.push_back(std::move(finished_));
  return shown_runs_.back().get();
}

std::string Resimulation::error() const {
  const std::lock_guard lock(mutex_);
  return error_;
}

std::string Resimulation::status() const {
  if (const auto p = progress()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "re-simulating %d%%", static_cast<int>(100.0 * *p));
    return buf;
  }
  const std::string e = error();
  return e.empty() ? "" : "re-simulation failed: " + e;
}

void Resimulation::wait() {
  if (worker_.joinable()) worker_.join();
}

std::filesystem::path Resimulation::save_mapping(const std::filesystem::path& folder) const {
  const std::string stem =
      (mapping_name_.empty() ? std::string("mapping") : std::filesystem::path(mapping_name_).stem().string()) +
      "-tuned-";
  for (int k = 1; k < 1000; ++k) {
    char number[16];  // room for any int (GCC cannot always bound k)
    std::snprintf(number, sizeof number, "%03d", k);
    const std::filesystem::path candidate = folder / (stem + number + ".toml");
    std::error_code ec;
    if (std::filesystem::exists(candidate, ec) || ec) continue;
    AtomicOutputFile out(candidate);
    out.write(text_);
    out.commit();
    return candidate;
  }
  throw InputError(FileLoc{folder.string()}, "no free name " + stem + "NNN.toml");
}

}  // namespace kanoko::sim
