#include "integrators/forces/forces.hpp"

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

}  // namespace

void derivative(const ForceTerms& terms, const Eigen::VectorXd& y, bool reuse_tree, DerivativeScratch& scratch,
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
  if (terms.repulsion.strength > 0) {
    RepulsionParams p = terms.repulsion;
    p.reuse_tree = reuse_tree;
    add_repulsion(x, p, scratch.repulsion, force);
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
  if (terms.pulls.empty()) return 0.0;
  const Eigen::Index n = terms.body_count();
  const Eigen::Map<const Eigen::Matrix3Xd> x(y.data(), 3, n);
  const Eigen::Map<const Eigen::Matrix3Xd> v(y.data() + 3 * n, 3, n);
  double p = 0;
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
