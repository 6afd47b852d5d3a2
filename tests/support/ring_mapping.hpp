// The small ring mapping the simulate, resume and re-simulation tests share: a ring of bodies on
// springs, a weak repulsion, symmetric communication pulls and friction.
#pragma once

#include <sstream>
#include <string>

namespace kanoko::test {

struct RingMapping {
  std::string dt = "0.025";  ///< the text after "dt = " (may carry a comment)
  double settle_s = 0.3;
  double gain = 1.0;
  double beta = 1.0;
};

inline std::string ring_mapping(const RingMapping& r = {}) {
  std::ostringstream s;
  s << "# a ring of bodies, pulled by its traffic\n"
    << "[simulation]\ninterval = 0.1\ndt = " << r.dt << "\nframe_every = 2\nsettle = " << r.settle_s << "\n"
    << "[bodies]\nplacement = \"ring\"\n"
    << "[springs]\ntopology = \"ring\"\nk = 2   # stiffness\n"
    << "[forces.repulsion]\nstrength = 0.01\n"
    << "[forces.communication]\nmode = \"symmetric\"\ngain = " << r.gain << "\n"
    << "[forces.friction]\nbeta = " << r.beta << "\n";
  return s.str();
}

}  // namespace kanoko::test
