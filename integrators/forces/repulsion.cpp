#include "integrators/forces/repulsion.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "integrators/forces/force_scratch.hpp"
#include "integrators/forces/forces_testing.hpp"
#include "src/base/check.hpp"
#include "src/base/interrupt.hpp"

namespace kanoko::integrators {

namespace {

constexpr std::size_t kBlock = detail::kTargetBlock;

/// Issue 4's thresholds, kept for barnes-hut-v1: threads from this many bodies on.
constexpr std::size_t kV1ParallelMinBodies = 256;

template <class V>
std::size_t capacity_bytes(const V& v) {
  return v.capacity() * sizeof(typename V::value_type);
}

/// Resizes the structure-of-arrays buffers for n bodies plus padding, zeroing the padding.
void prepare_bodies(ForceScratchData& d, std::size_t n, bool potential) {
  const std::size_t padded = n + kBlock;
  for (auto* v : {&d.x, &d.y, &d.z, &d.ax, &d.ay, &d.az}) v->resize(padded);
  if (potential) d.phi.resize(padded);
  for (auto* v : {&d.x, &d.y, &d.z}) std::fill(v->begin() + static_cast<std::ptrdiff_t>(n), v->end(), 0.0);
}

/// Direct summation: for every body, the sum over all bodies in index order, in blocks of targets;
/// with a partition, only this part's blocks, then the parts' sums shared.
void direct_sums(const Eigen::Ref<const Eigen::Matrix3Xd>& positions, double eps2, bool potential, int threads,
                 const detail::KernelTable& kernels, Partition* partition, ForceScratchData& d) {
  const auto n = static_cast<std::size_t>(positions.cols());
  prepare_bodies(d, n, potential);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<Eigen::Index>(i);
    d.x[i] = positions(0, c);
    d.y[i] = positions(1, c);
    d.z[i] = positions(2, c);
  }
  const detail::BodySources sources{d.x.data(), d.y.data(), d.z.data(), n};
  const std::size_t block_count = (n + kBlock - 1) / kBlock;
  std::size_t first_block = 0, last_block = block_count;
  if (partition != nullptr) {
    // Part p sums blocks [B p / P, B (p + 1) / P).
    const auto parts = static_cast<std::size_t>(partition->parts());
    d.part_bounds.resize(parts + 1);
    for (std::size_t p = 0; p <= parts; ++p) d.part_bounds[p] = std::min(n, block_count * p / parts * kBlock);
    const auto part = static_cast<std::size_t>(partition->part());
    first_block = block_count * part / parts;
    last_block = block_count * (part + 1) / parts;
  }
  const auto first = static_cast<std::int64_t>(first_block);
  const auto last = static_cast<std::int64_t>(last_block);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (std::int64_t b = first; b < last; ++b) {
    if (interrupt_requested()) continue;  // a signal abandons the sums; thrown below, on this thread
    const std::size_t o = static_cast<std::size_t>(b) * kBlock;
    for (std::size_t k = o; k < o + kBlock; ++k) {
      d.ax[k] = 0;
      d.ay[k] = 0;
      d.az[k] = 0;
      if (potential) d.phi[k] = 0;
    }
    const detail::TargetBlock targets{d.x.data() + o, d.y.data() + o, d.z.data() + o, kBlock};
    const detail::Accumulators acc{d.ax.data() + o, d.ay.data() + o, d.az.data() + o,
                                   potential ? d.phi.data() + o : nullptr};
    kernels.bodies(targets, sources, eps2, acc);
  }
  check_interrupt();
  if (partition != nullptr) detail::share_sums(d, *partition, d.part_bounds, potential, false);
}

/// The shared entry: sums into the scratch, then scales by R into `force` and/or returns the
/// potential energy. `force` may be null (potential only).
double evaluate(const Eigen::Ref<const Eigen::Matrix3Xd>& positions, const RepulsionParams& params, TreeFault fault,
                ForceScratch& scratch, Eigen::Ref<Eigen::Matrix3Xd>* force, bool potential) {
  KANOKO_ASSERT(params.theta >= 0 && params.softening >= 0, "theta and softening must be non-negative");
  KANOKO_ASSERT(params.leaf_size >= 1, "the leaf size must be positive");
  const auto n = static_cast<std::size_t>(positions.cols());
  KANOKO_ASSERT(n < (std::size_t{1} << 31), "too many bodies");
  ForceStats& stats = ForceAccess::stats(scratch);
  stats = ForceStats{};
  stats.evaluator = resolve_evaluator(params.evaluator, n);
  stats.simd = params.simd == Simd::Best ? best_simd() : params.simd;
  KANOKO_ASSERT(simd_supported(stats.simd), "the requested SIMD kernels are not supported by this CPU");
  stats.threads = evaluation_threads(params.threads, stats.evaluator, n);
  if (n == 0 || params.strength == 0) return 0.0;
  if (!positions.allFinite()) {
    // A blown-up state: report it through the result rather than build a tree from NaNs.
    if (force != nullptr) force->setConstant(std::numeric_limits<double>::quiet_NaN());
    return std::numeric_limits<double>::quiet_NaN();
  }
  ForceScratchData& d = ForceAccess::data(scratch);
  const bool v1 = stats.evaluator == Evaluator::BarnesHutV1;
  const detail::KernelTable& kernels =
      detail::kernels_for(stats.simd, v1 ? detail::KernelMath::Exact : detail::KernelMath::Fast);
  const double eps2 = params.softening * params.softening;
  KANOKO_ASSERT(fault == TreeFault::None || stats.evaluator != Evaluator::Direct,
                "a tree fault needs the Barnes-Hut evaluator");
  if (stats.evaluator == Evaluator::Direct) {
    direct_sums(positions, eps2, potential, stats.threads, kernels, params.partition, d);
    stats.body_body = static_cast<std::uint64_t>(n) * n;
    if (force != nullptr) {
      for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<Eigen::Index>(i);
        (*force)(0, c) += params.strength * d.ax[i];
        (*force)(1, c) += params.strength * d.ay[i];
        (*force)(2, c) += params.strength * d.az[i];
      }
    }
  } else {
    RepulsionParams tree = params;
    if (tree.group_size == 0) tree.group_size = v1 ? 192 : kGroupSize;
    if (v1) tree.reuse_tree = false;
    detail::barnes_hut_sums(positions, tree, fault, potential, stats.threads, kernels, !v1, scratch);
    if (force != nullptr) {
      const auto count = static_cast<std::int64_t>(n);
      Eigen::Ref<Eigen::Matrix3Xd>& f = *force;
#pragma omp parallel for schedule(static) num_threads(stats.threads) if (stats.threads > 1 && count >= 256)
      for (std::int64_t k = 0; k < count; ++k) {
        const auto s = static_cast<std::size_t>(k);
        const auto c = static_cast<Eigen::Index>(d.order[s]);
        f(0, c) += params.strength * d.ax[s];
        f(1, c) += params.strength * d.ay[s];
        f(2, c) += params.strength * d.az[s];
      }
    }
  }
  if (!potential) return 0.0;
  // Each body's own term (d = 0) is in its sum when ε > 0: remove it. Summed serially, in the
  // order of the scratch arrays, which depends on the positions only.
  double sum = 0;
  for (std::size_t k = 0; k < n; ++k) sum += d.phi[k];
  if (eps2 > 0) sum -= static_cast<double>(n) * (1.0 / std::sqrt(eps2));
  return 0.5 * params.strength * sum;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Scratch

ForceScratch::ForceScratch() : data_(std::make_unique<ForceScratchData>()) {}
ForceScratch::~ForceScratch() = default;
ForceScratch::ForceScratch(ForceScratch&&) noexcept = default;
ForceScratch& ForceScratch::operator=(ForceScratch&&) noexcept = default;

std::size_t ForceScratch::bytes() const { return data_->bytes(); }

ForceScratchData& ForceAccess::data(ForceScratch& s) { return *s.data_; }

std::size_t WalkScratch::bytes() const {
  std::size_t b = capacity_bytes(stack) + capacity_bytes(ranges) + cells.bytes();
  for (const auto* v : {&ax, &ay, &az, &phi}) b += capacity_bytes(*v);
  return b + targets.bytes() + near.bytes();
}

void SplitFloats::append(const std::vector<double>& px, const std::vector<double>& py, const std::vector<double>& pz,
                         std::size_t begin, std::size_t end, const std::array<double, 3>& origin) {
  for (std::size_t k = begin; k < end; ++k) {
    const double ox = px[k] - origin[0];
    const double oy = py[k] - origin[1];
    const double oz = pz[k] - origin[2];
    const auto hx = static_cast<float>(ox);
    const auto hy = static_cast<float>(oy);
    const auto hz = static_cast<float>(oz);
    x.push_back(hx);
    y.push_back(hy);
    z.push_back(hz);
    lx.push_back(static_cast<float>(ox - static_cast<double>(hx)));
    ly.push_back(static_cast<float>(oy - static_cast<double>(hy)));
    lz.push_back(static_cast<float>(oz - static_cast<double>(hz)));
  }
}

void SplitFloats::pad_to(std::size_t count) {
  for (auto* v : {&x, &y, &z, &lx, &ly, &lz}) v->resize(count, v->empty() ? 0.0F : v->back());
}

void SplitFloats::clear() {
  for (auto* v : {&x, &y, &z, &lx, &ly, &lz}) v->clear();
}

void SplitFloats::reserve(std::size_t count) {
  for (auto* v : {&x, &y, &z, &lx, &ly, &lz}) v->reserve(count);
}

detail::FloatPoints SplitFloats::points() const {
  return {x.data(), y.data(), z.data(), lx.data(), ly.data(), lz.data(), x.size()};
}

std::size_t SplitFloats::bytes() const {
  std::size_t b = 0;
  for (const auto* v : {&x, &y, &z, &lx, &ly, &lz}) b += capacity_bytes(*v);
  return b;
}

void CellList::clear() {
  for (auto* v : {&x, &y, &z, &m, &qxx, &qxy, &qxz, &qyy, &qyz, &qzz, &qtr}) v->clear();
  for (auto* v : {&fx, &fy, &fz, &fm}) v->clear();
}

void CellList::push(const TreeNode& node, const TreeMoments* q) {
  x.push_back(node.cx);
  y.push_back(node.cy);
  z.push_back(node.cz);
  m.push_back(node.charge);
  if (q != nullptr) {
    qxx.push_back(q->xx);
    qxy.push_back(q->xy);
    qxz.push_back(q->xz);
    qyy.push_back(q->yy);
    qyz.push_back(q->yz);
    qzz.push_back(q->zz);
    qtr.push_back(q->trace);
  }
}

void CellList::reserve(std::size_t cells) {
  for (auto* v : {&x, &y, &z, &m, &qxx, &qxy, &qxz, &qyy, &qyz, &qzz, &qtr}) v->reserve(cells);
  for (auto* v : {&fx, &fy, &fz, &fm}) v->reserve(cells);
}

detail::CellSources CellList::sources() const {
  return {x.data(),   y.data(),   z.data(),   m.data(),   qxx.data(), qxy.data(),
          qxz.data(), qyy.data(), qyz.data(), qzz.data(), qtr.data(), x.size()};
}

detail::FloatCells CellList::offsets_from(const std::array<double, 3>& origin) {
  const std::size_t n = x.size();
  fx.resize(n);
  fy.resize(n);
  fz.resize(n);
  fm.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    fx[k] = static_cast<float>(x[k] - origin[0]);
    fy[k] = static_cast<float>(y[k] - origin[1]);
    fz[k] = static_cast<float>(z[k] - origin[2]);
    fm[k] = static_cast<float>(m[k]);
  }
  return {fx.data(), fy.data(), fz.data(), fm.data(), n};
}

std::size_t CellList::bytes() const {
  std::size_t b = 0;
  for (const auto* v : {&x, &y, &z, &m, &qxx, &qxy, &qxz, &qyy, &qyz, &qzz, &qtr}) b += capacity_bytes(*v);
  for (const auto* v : {&fx, &fy, &fz, &fm}) b += capacity_bytes(*v);
  return b;
}

void WalkScratch::reserve(std::size_t cell_count, std::size_t body_ranges, std::size_t bodies,
                          std::size_t padded_targets, std::size_t stack_depth) {
  stack.reserve(stack_depth);
  cells.reserve(cell_count);
  ranges.reserve(body_ranges);
  near.reserve(bodies);
  for (auto* v : {&ax, &ay, &az, &phi}) v->reserve(padded_targets);
  targets.reserve(padded_targets);
}

std::size_t ForceScratchData::bytes() const {
  std::size_t b = 0;
  for (const auto* v : {&x, &y, &z, &ax, &ay, &az, &phi, &built_x, &built_y, &built_z, &shared, &body_cost, &cost}) {
    b += capacity_bytes(*v);
  }
  b += capacity_bytes(part_bounds) + capacity_bytes(part_groups);
  b += capacity_bytes(keys) + capacity_bytes(keys_tmp) + capacity_bytes(order) + capacity_bytes(order_tmp);
  b += capacity_bytes(nodes) + capacity_bytes(moments) + capacity_bytes(leaves) + capacity_bytes(groups);
  b += capacity_bytes(walk);
  for (const auto& w : walk) b += w.bytes();
  return b;
}

void detail::share_sums(ForceScratchData& d, Partition& partition, const std::vector<std::size_t>& bounds,
                        bool potential, bool cost) {
  std::array<double*, 5> columns{d.ax.data(), d.ay.data(), d.az.data(), nullptr, nullptr};
  std::size_t stride = 3;
  if (potential) columns[stride++] = d.phi.data();
  if (cost) columns[stride++] = d.cost.data();
  const std::size_t n = bounds.back();
  d.shared.resize(stride * n);
  const auto part = static_cast<std::size_t>(partition.part());
  for (std::size_t k = bounds[part]; k < bounds[part + 1]; ++k) {
    for (std::size_t c = 0; c < stride; ++c) d.shared[stride * k + c] = columns[c][k];
  }
  partition.share(d.shared.data(), bounds, stride);
  for (std::size_t k = 0; k < n; ++k) {
    for (std::size_t c = 0; c < stride; ++c) columns[c][k] = d.shared[stride * k + c];
  }
}

// ---------------------------------------------------------------------------------------------
// Names and dispatch

Evaluator resolve_evaluator(Evaluator requested, std::size_t bodies) {
  if (requested != Evaluator::Auto) return requested;
  return bodies <= kAutoDirectMaxBodies ? Evaluator::Direct : Evaluator::BarnesHut;
}

bool simd_supported(Simd simd) {
  switch (simd) {
    case Simd::Best: return true;
    case Simd::Avx512: return __builtin_cpu_supports("avx512f") != 0;
    case Simd::Avx2: return __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0;
    case Simd::Portable: return true;
  }
  return false;
}

Simd best_simd() {
  static const Simd best = simd_supported(Simd::Avx512) ? Simd::Avx512
                           : simd_supported(Simd::Avx2) ? Simd::Avx2
                                                        : Simd::Portable;
  return best;
}

const detail::KernelTable& detail::kernels_for(Simd simd, KernelMath math) {
  switch (simd == Simd::Best ? best_simd() : simd) {
    case Simd::Avx512: return avx512_kernels(math);
    case Simd::Avx2: return avx2_kernels(math);
    case Simd::Best:
    case Simd::Portable: break;
  }
  return portable_kernels(math);
}

const char* to_string(Evaluator e) {
  switch (e) {
    case Evaluator::Auto: return "auto";
    case Evaluator::Direct: return "direct";
    case Evaluator::BarnesHut: return "barnes-hut";
    case Evaluator::BarnesHutV1: return "barnes-hut-v1";
  }
  return "?";
}

const char* to_string(Multipole m) {
  switch (m) {
    case Multipole::Monopole: return "monopole";
    case Multipole::Quadrupole: return "quadrupole";
  }
  return "?";
}

const char* to_string(Simd s) {
  switch (s) {
    case Simd::Best: return "best";
    case Simd::Avx512: return "avx512";
    case Simd::Avx2: return "avx2";
    case Simd::Portable: return "portable";
  }
  return "?";
}

namespace {
template <class Enum, std::size_t N>
std::vector<std::string> names_of(const std::array<Enum, N>& values) {
  std::vector<std::string> names;
  for (Enum e : values) names.emplace_back(to_string(e));
  return names;
}
}  // namespace

std::vector<std::string> evaluator_names() { return names_of(kUserEvaluators); }

std::vector<std::string> multipole_names() { return names_of(kMultipoles); }

int effective_threads(int threads) { return threads > 0 ? threads : std::max(1, omp_get_max_threads()); }

int evaluation_threads(int threads, Evaluator evaluator, std::size_t bodies) {
  const std::size_t min_bodies = evaluator == Evaluator::BarnesHutV1 ? kV1ParallelMinBodies : kParallelMinBodies;
  return bodies < min_bodies ? 1 : effective_threads(threads);
}

// ---------------------------------------------------------------------------------------------
// Public entry points

void add_repulsion(const Eigen::Ref<const Eigen::Matrix3Xd>& positions, const RepulsionParams& params,
                   ForceScratch& scratch, Eigen::Ref<Eigen::Matrix3Xd> force) {
  KANOKO_ASSERT(force.cols() == positions.cols(), "force and positions differ in size");
  evaluate(positions, params, TreeFault::None, scratch, &force, false);
}

double repulsion_potential(const Eigen::Ref<const Eigen::Matrix3Xd>& positions, const RepulsionParams& params,
                           ForceScratch& scratch) {
  return evaluate(positions, params, TreeFault::None, scratch, nullptr, true);
}

void add_repulsion_with_fault(const Eigen::Ref<const Eigen::Matrix3Xd>& positions, const RepulsionParams& params,
                              TreeFault fault, ForceScratch& scratch, Eigen::Ref<Eigen::Matrix3Xd> force) {
  KANOKO_ASSERT(force.cols() == positions.cols(), "force and positions differ in size");
  KANOKO_ASSERT(resolve_evaluator(params.evaluator, static_cast<std::size_t>(positions.cols())) !=
                    Evaluator::Direct,
                "a tree fault needs the Barnes-Hut evaluator");
  evaluate(positions, params, fault, scratch, &force, false);
}

}  // namespace kanoko::integrators
