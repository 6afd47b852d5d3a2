// What the viewer asks of a re-simulation driver (the paper's interactive modelling: force
// parameters changed while paused, the run re-simulated in the background from the frame on
// screen). The scene never simulates: the command hands in a driver (sim::Resimulation, in the
// simulation library) wrapped in ResimulatorOf.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "src/mapping/edit.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::scene {

class Resimulator {
 public:
  /// Each change multiplies or divides a parameter by this factor.
  static constexpr double kStep = 1.25;

  virtual ~Resimulator() = default;
  /// The parameters and their current values.
  [[nodiscard]] virtual const std::vector<mapping::Tunable>& parameters() const = 0;
  /// True once a parameter was changed.
  [[nodiscard]] virtual bool edited() const = 0;
  /// Multiplies parameter `index` by `factor` and re-simulates from frame `frame` of `shown`.
  virtual void change(std::size_t index, double factor, const trajectory::Reader& shown, std::size_t frame) = 0;
  /// The finished run, once (null if none finished since the last call); the driver keeps it
  /// alive as long as itself.
  [[nodiscard]] virtual const trajectory::Reader* take_finished() = 0;
  /// One line for the status bar: progress, failure, or "" when idle.
  [[nodiscard]] virtual std::string status() const = 0;
  /// Writes the edited mapping into `folder`; returns its path (InputError if it cannot).
  virtual std::filesystem::path save_mapping(const std::filesystem::path& folder) const = 0;
};

/// Any driver with those member functions, seen as a Resimulator (it must outlive this).
template <class Driver>
class ResimulatorOf final : public Resimulator {
 public:
  explicit ResimulatorOf(Driver& driver) : d_(driver) {}
  [[nodiscard]] const std::vector<mapping::Tunable>& parameters() const override { return d_.parameters(); }
  [[nodiscard]] bool edited() const override { return d_.edited(); }
  void change(std::size_t index, double factor, const trajectory::Reader& shown, std::size_t frame) override {
    d_.change(index, factor, shown, frame);
  }
  [[nodiscard]] const trajectory::Reader* take_finished() override { return d_.take_finished(); }
  [[nodiscard]] std::string status() const override { return d_.status(); }
  std::filesystem::path save_mapping(const std::filesystem::path& folder) const override {
    return d_.save_mapping(folder);
  }

 private:
  Driver& d_;
};

}  // namespace kanoko::scene
