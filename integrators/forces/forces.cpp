#include "integrators/forces/forces.hpp"

#include <array>
#include <cstring>

#include "src/base/check.hpp"

namespace kanoko::integrators {

namespace {

/// Sets f to the force of pull p on its `from` body at positions x; false (f untouched) when the
/// two bodies are too close to give it a direction.
bool pull_force(const Pull& p, const Eigen::Map<const Eigen::Matrix3Xd>& x, Eigen::Vector3d& f) {
  const Eigen::Vector3d d = x.col(p.to) - x.col(p.from);
  const double r = d.norm();
  if (r < kPullMinDistance) return false;
  f = (p.weight / r) * d;
  return true;
}

/// The numbers that decide the repulsion at given positions (threads, SIMD kernels and processes
/// do not change it).
std::array<double, 7> repulsion_law(const RepulsionParams& p) {
  return {p.strength, p.softening, static_cast<double>(p.evaluator), p.theta, static_cast<double>(p.multipole),
          static_cast<double>(p.leaf_size), static_cast<double>(p.group_size)};
}

/// scratch.repulsion_force := the repulsion at x, taken from the last evaluation when it was at x
/// (bit for bit) under the same law (true), else summed and kept with x (false).
bool repulsion_force(const Eigen::Map<const Eigen::Matrix3Xd>& x, const RepulsionParams& params, bool reuse_tree,
                     DerivativeScratch& scratch) {
  const std::array<double, 7> law = repulsion_law(params);
  const auto bytes = static_cast<std::size_t>(x.size()) * sizeof(double);
  if (scratch.repulsion_kept && scratch.repulsion_law == law && scratch.repulsion_at.cols() == x.cols() &&
      std::memcmp(scratch.repulsion_at.data(), x.data(), bytes) == 0) {
    return true;
  }
  if (scratch.repulsion_force.cols() != x.cols()) {
    scratch.repulsion_force.resize(3, x.cols());
    scratch.repulsion_at.resize(3, x.cols());
  }
  scratch.repulsion_force.setZero();
  RepulsionParams p = params;
  p.reuse_tree = reuse_tree;
  add_repulsion(x, p, scratch.repulsion, scratch.repulsion_force);
  scratch.repulsion_at = x;
  scratch.repulsion_law = law;
  scratch.repulsion_kept = true;
  return false;
}

}  // namespace

bool derivative(const ForceTerms& terms, const Eigen::VectorXd& y, bool reuse_tree, DerivativeScratch& scratch,
                Eigen::VectorXd& dydt) {
  const Eigen::Index n = terms.body_count();
  KANOKO_ASSERT(y.size() == 6 * n && dydt.size() == 6 * n, "state vector has the wrong size");
  const Eigen::Map<const Eigen::Matrix3Xd> x(y.data(), 3, n);
  const Eigen::Map<const Eigen::Matrix3Xd> v(y.data() + 3 * n, 3, n);
  Eigen::Map<Eigen::Matrix3Xd> dx(dydt.data(), 3, n);
  Eigen::Map<Eigen::Matrix3Xd> dv(dydt.data() + 3 * n, 3, n);
  Eigen::Matrix3Xd& force = scratch.force;
  if (force.cols() != n) force.resize(3, n);
  dx = v;
  force.setZero();

  for (std::size_t s = 0; s < terms.spring_edges.size(); ++s) {
    const double k = terms.spring_k[s];
    const auto a = static_cast<Eigen::Index>(terms.spring_edges[s][0]);
    const auto b = static_cast<Eigen::Index>(terms.spring_edges[s][1]);
    const Eigen::Vector3d d = x.col(a) - x.col(b);
    const double r = d.norm();
    if (r == 0.0) continue;
    const Eigen::Vector3d f = (k * (terms.spring_length[s] - r) / r) * d;
    force.col(a) += f;
    force.col(b) -= f;
  }
  bool reused = false;
  if (terms.repulsion.strength > 0) {
    reused = repulsion_force(x, terms.repulsion, reuse_tree, scratch);
    force += scratch.repulsion_force;  // one addition per body, as add_repulsion's own
  }
  if (terms.fixed_force.cols() != 0) {
    KANOKO_ASSERT(terms.fixed_force.cols() == n, "the fixed force needs one column per body");
    force += terms.fixed_force;
  }
  Eigen::Vector3d f;
  for (const Pull& p : terms.pulls) {
    if (!pull_force(p, x, f)) continue;
    force.col(p.from) += f;
    if (terms.symmetric_pulls) force.col(p.to) -= f;
  }
  if (terms.centre_strength > 0) force -= terms.centre_strength * (x.colwise() - terms.centre);
  dv = force.array().rowwise() / terms.mass.transpose().array();
  if (terms.friction > 0) dv -= terms.friction * v;
  return reused;
}

double mechanical_energy(const ForceTerms& terms, const Eigen::VectorXd& y) {
  const Eigen::Index n = terms.body_count();
  const Eigen::Map<const Eigen::Matrix3Xd> x(y.data(), 3, n);
  double e = kinetic_energy(terms, y);
  for (std::size_t s = 0; s < terms.spring_edges.size(); ++s) {
    const double stretch =
        (x.col(terms.spring_edges[s][0]) - x.col(terms.spring_edges[s][1])).norm() - terms.spring_length[s];
    e += 0.5 * terms.spring_k[s] * stretch * stretch;
  }
  if (terms.repulsion.strength > 0) {
    ForceScratch scratch;  // called rarely; keeps the stepping scratch (and its tree) apart
    e += repulsion_potential(x, terms.repulsion, scratch);
  }
  if (terms.centre_strength > 0) {
    e += 0.5 * terms.centre_strength * (x.colwise() - terms.centre).colwise().squaredNorm().sum();
  }
  return e;
}

double kinetic_energy(const ForceTerms& terms, const Eigen::VectorXd& y) {
  const Eigen::Index n = terms.body_count();
  const Eigen::Map<const Eigen::Matrix3Xd> v(y.data() + 3 * n, 3, n);
  return 0.5 * (v.colwise().squaredNorm().transpose().array() * terms.mass.array()).sum();
}

double forcing_power(const ForceTerms& terms, const Eigen::VectorXd& y) {
  const Eigen::Index n = terms.body_count();
  const Eigen::Map<const Eigen::Matrix3Xd> x(y.data(), 3, n);
  const Eigen::Map<const Eigen::Matrix3Xd> v(y.data() + 3 * n, 3, n);
  double p = terms.fixed_force.cols() == n ? terms.fixed_force.cwiseProduct(v).sum() : 0.0;
  Eigen::Vector3d f;
  for (const Pull& pull : terms.pulls) {
    if (!pull_force(pull, x, f)) continue;
    p += f.dot(v.col(pull.from));
    if (terms.symmetric_pulls) p -= f.dot(v.col(pull.to));
  }
  return p;
}

double friction_power(const ForceTerms& terms, const Eigen::VectorXd& y) {
  if (terms.friction <= 0) return 0.0;
  const Eigen::Index n = terms.body_count();
  const Eigen::Map<const Eigen::Matrix3Xd> v(y.data() + 3 * n, 3, n);
  return terms.friction * (v.colwise().squaredNorm().transpose().array() * terms.mass.array()).sum();
}

}  // namespace kanoko::integrators
