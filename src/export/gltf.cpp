#include "src/export/gltf.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <span>
#include <cmath>
#include <cstring>
#include <map>
#include <numbers>
#include <utility>

#include "src/base/atomic_file.hpp"
#include "src/base/check.hpp"
#include "src/base/error.hpp"
#include "src/base/interrupt.hpp"
#include "src/trajectory/body_size.hpp"

namespace kanoko::exporting {
namespace {

// glTF constants (glTF 2.0 specification, sections 3.6 and 4.4).
constexpr std::uint32_t kGlbMagic = 0x46546C67;  // "glTF"
constexpr std::uint32_t kGlbVersion = 2;
constexpr std::uint32_t kChunkJson = 0x4E4F534A;  // "JSON"
constexpr std::uint32_t kChunkBin = 0x004E4942;   // "BIN\0"
constexpr int kFloat = 5126;
constexpr int kUnsignedShort = 5123;
constexpr int kUnsignedInt = 5125;
constexpr int kArrayBuffer = 34962;
constexpr int kElementArrayBuffer = 34963;
constexpr int kModeLines = 1;
constexpr int kModeTriangles = 4;

// The shared sphere: a unit UV sphere.
constexpr int kRings = 12;
constexpr int kSegments = 16;
constexpr std::size_t kSphereVertices = (kRings + 1) * (kSegments + 1);
constexpr std::size_t kSphereIndices = (kRings - 1) * kSegments * 6;  // one triangle per quad at the poles
// Joint indices are unsigned shorts (JOINTS_0 allows no wider type).
constexpr std::size_t kMaxSkinnedBodies = 65536;
// Bodies whose keyframes are gathered per pass over the frames: at most this many bytes of them.
constexpr std::size_t kTranslationChunkBytes = std::size_t{64} << 20;

std::uint64_t pad4(std::uint64_t n) { return (n + 3) & ~std::uint64_t{3}; }

/// Where each part of the binary chunk goes (byte offsets, each a multiple of 4).
struct Layout {
  std::size_t bodies = 0, keyframes = 0, springs = 0;
  bool skinned = false;  ///< springs drawn (edges present and few enough bodies for the joints)
  bool scaled = false;   ///< a scale channel per body (the run's masses change)
  std::uint64_t sphere_positions = 0, sphere_normals = 0, sphere_indices = 0, times = 0, translations = 0,
                scales = 0, spring_positions = 0, joints = 0, weights = 0, spring_indices = 0, inverse_binds = 0, end = 0;
};

Layout layout_of(std::size_t bodies, std::size_t keyframes, std::size_t edges, bool scaled) {
  Layout l;
  l.bodies = bodies;
  l.scaled = scaled;
  l.keyframes = keyframes;
  l.skinned = edges > 0 && bodies <= kMaxSkinnedBodies;
  l.springs = l.skinned ? edges : 0;
  std::uint64_t at = 0;
  const auto take = [&at](std::uint64_t bytes) {
    const std::uint64_t start = at;
    at = pad4(at + bytes);
    return start;
  };
  l.sphere_positions = take(kSphereVertices * 12);
  l.sphere_normals = take(kSphereVertices * 12);
  l.sphere_indices = take(kSphereIndices * 2);
  l.times = take(std::uint64_t{keyframes} * 4);
  l.translations = take(std::uint64_t{bodies} * keyframes * 12);
  l.scales = take(scaled ? std::uint64_t{bodies} * keyframes * 12 : 0);
  if (l.skinned) {
    l.spring_positions = take(std::uint64_t{bodies} * 12);
    l.joints = take(std::uint64_t{bodies} * 8);
    l.weights = take(std::uint64_t{bodies} * 16);
    l.spring_indices = take(std::uint64_t{l.springs} * 8);
    l.inverse_binds = take(std::uint64_t{bodies} * 64);
  }
  l.end = at;
  return l;
}

/// The unit sphere's vertices (positions = normals) and triangle indices.
void sphere(std::vector<float>& vertices, std::vector<std::uint16_t>& indices) {
  vertices.clear();
  indices.clear();
  for (int r = 0; r <= kRings; ++r) {
    const double theta = std::numbers::pi * r / kRings;
    for (int s = 0; s <= kSegments; ++s) {
      const double phi = 2 * std::numbers::pi * s / kSegments;
      vertices.push_back(static_cast<float>(std::sin(theta) * std::cos(phi)));
      vertices.push_back(static_cast<float>(std::cos(theta)));
      vertices.push_back(static_cast<float>(std::sin(theta) * std::sin(phi)));
    }
  }
  for (int r = 0; r < kRings; ++r) {
    for (int s = 0; s < kSegments; ++s) {
      const auto a = static_cast<std::uint16_t>(r * (kSegments + 1) + s);
      const auto b = static_cast<std::uint16_t>(a + kSegments + 1);
      const auto a1 = static_cast<std::uint16_t>(a + 1);
      const auto b1 = static_cast<std::uint16_t>(b + 1);
      // Counter-clockwise seen from outside; no degenerate triangle at the poles.
      if (r > 0) indices.insert(indices.end(), {a, a1, b});
      if (r + 1 < kRings) indices.insert(indices.end(), {b, a1, b1});
    }
  }
}

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void key(JsonWriter& w, const char* k) { w.Key(k); }
void number_array(JsonWriter& w, std::initializer_list<double> values) {
  w.StartArray();
  for (double v : values) w.Double(v);
  w.EndArray();
}

/// Everything the JSON chunk says, gathered from the run.
struct Plan {
  Layout layout;
  std::vector<std::size_t> keyframes;
  std::vector<float> times;                     ///< seconds from the first keyframe
  std::vector<std::array<float, 3>> first;      ///< each body's position at the first keyframe
  std::vector<float> first_scale;               ///< each body's drawn radius at the first keyframe
  std::vector<int> material_of_body;
  std::vector<std::array<float, 3>> colours;    ///< one per material
  std::string json;                             ///< padded with spaces to a multiple of 4
  [[nodiscard]] std::uint64_t file_bytes() const {
    return 12 + 8 + json.size() + (layout.end > 0 ? 8 + layout.end : 0);
  }
};

void write_accessor(JsonWriter& w, int view, std::uint64_t offset, int component, std::size_t count, const char* type,
                    const std::array<float, 3>* min = nullptr, const std::array<float, 3>* max = nullptr,
                    int components = 3) {
  w.StartObject();
  key(w, "bufferView");
  w.Int(view);
  if (offset != 0) {
    key(w, "byteOffset");
    w.Uint64(offset);
  }
  key(w, "componentType");
  w.Int(component);
  key(w, "count");
  w.Uint64(count);
  key(w, "type");
  w.String(type);
  if (min != nullptr && max != nullptr) {
    key(w, "min");
    w.StartArray();
    for (int c = 0; c < components; ++c) w.Double((*min)[static_cast<std::size_t>(c)]);
    w.EndArray();
    key(w, "max");
    w.StartArray();
    for (int c = 0; c < components; ++c) w.Double((*max)[static_cast<std::size_t>(c)]);
    w.EndArray();
  }
  w.EndObject();
}

/// A mesh of one primitive.
void write_mesh(JsonWriter& w, const std::string& name, std::initializer_list<std::pair<const char*, int>> attributes,
                int indices, int material, int mode) {
  w.StartObject();
  key(w, "name");
  w.String(name.c_str(), static_cast<rapidjson::SizeType>(name.size()));
  key(w, "primitives");
  w.StartArray();
  w.StartObject();
  key(w, "attributes");
  w.StartObject();
  for (const auto& [attribute, accessor] : attributes) {
    key(w, attribute);
    w.Int(accessor);
  }
  w.EndObject();
  key(w, "indices");
  w.Int(indices);
  key(w, "material");
  w.Int(material);
  key(w, "mode");
  w.Int(mode);
  w.EndObject();
  w.EndArray();
  w.EndObject();
}

/// Body i's drawn radius in frame f, as the desktop viewer draws it: its radius grown with the cube
/// root of its mass relative to frame 0 (`f0`; mass_stat < 0: the run stores no mass).
float drawn_radius(const trajectory::Metadata& meta, int mass_stat, const trajectory::FrameView& f,
                   const trajectory::FrameView& f0, std::size_t i) {
  const double r = trajectory::body_radius(meta.bodies[i]);
  if (mass_stat < 0) return static_cast<float>(r);
  const auto s = static_cast<Eigen::Index>(mass_stat);
  const auto j = static_cast<Eigen::Index>(i);
  return static_cast<float>(r * trajectory::mass_ratio_scale(f.stats(s, j), f0.stats(s, j)));
}

/// Whether some body's drawn radius changes over the keyframes (reads keyframes until one does).
bool sizes_change(const trajectory::Reader& reader, const std::vector<std::size_t>& keyframes) {
  const trajectory::Metadata& meta = reader.meta();
  const int mass_stat = meta.stat_index(trajectory::stat::kMass);
  if (mass_stat < 0 || keyframes.empty()) return false;
  const trajectory::FrameView f0 = reader.frame(0);
  const trajectory::FrameView first = reader.frame(keyframes.front());
  for (std::size_t k : keyframes) {
    const trajectory::FrameView f = reader.frame(k);
    for (std::size_t i = 0; i < meta.body_count(); ++i) {
      if (drawn_radius(meta, mass_stat, f, f0, i) != drawn_radius(meta, mass_stat, first, f0, i)) return true;
    }
  }
  return false;
}

Plan make_plan(const trajectory::Reader& reader, const std::vector<std::size_t>& keyframes) {
  const trajectory::Metadata& meta = reader.meta();
  Plan p;
  p.keyframes = keyframes;
  p.layout = layout_of(meta.body_count(), keyframes.size(), meta.edges.size(), sizes_change(reader, keyframes));
  const Layout& l = p.layout;
  const double t0 = reader.frame_time(keyframes.front());
  for (std::size_t k : keyframes) p.times.push_back(static_cast<float>(reader.frame_time(k) - t0));
  const trajectory::FrameView f0 = reader.frame(keyframes.front());
  const trajectory::FrameView run0 = reader.frame(0);
  const int mass_stat = meta.stat_index(trajectory::stat::kMass);
  std::array<float, 3> lo{}, hi{};
  for (std::size_t i = 0; i < l.bodies; ++i) {
    p.first_scale.push_back(drawn_radius(meta, mass_stat, f0, run0, i));
    std::array<float, 3> x{};
    for (int c = 0; c < 3; ++c) {
      x[static_cast<std::size_t>(c)] = static_cast<float>(f0.positions(c, static_cast<Eigen::Index>(i)));
    }
    p.first.push_back(x);
    for (std::size_t c = 0; c < 3; ++c) {
      lo[c] = i == 0 ? x[c] : std::min(lo[c], x[c]);
      hi[c] = i == 0 ? x[c] : std::max(hi[c], x[c]);
    }
  }
  std::map<std::array<float, 3>, int> material_index;
  for (const trajectory::BodyInfo& b : meta.bodies) {
    const auto [it, added] = material_index.emplace(b.colour_rgb, static_cast<int>(p.colours.size()));
    if (added) p.colours.push_back(b.colour_rgb);
    p.material_of_body.push_back(it->second);
  }
  const int body_materials = static_cast<int>(p.colours.size());

  // Buffer views, in the order of the layout.
  enum View { kViewSpherePositions, kViewSphereNormals, kViewSphereIndices, kViewTimes, kViewTranslations, kViewSpringPositions, kViewJoints,
              kViewWeights, kViewSpringIndices, kViewInverseBinds, kViewScales };
  // Accessors: 0 sphere positions, 1 normals, 2 indices, 3 times, 4.. translations (one per body),
  // then the scales (one per body, when they change), then spring positions, joints, weights,
  // indices, inverse bind matrices.
  const int first_translation = 4;
  const int first_scale = first_translation + static_cast<int>(l.bodies);
  const int spring_accessor = first_scale + (l.scaled ? static_cast<int>(l.bodies) : 0);

  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  key(w, "asset");
  w.StartObject();
  key(w, "version");
  w.String("2.0");
  key(w, "generator");
  w.String("kanoko export --gltf");
  key(w, "extras");
  w.StartObject();
  key(w, "time_origin_s");  // trace time of animation time 0
  w.Double(t0);
  w.EndObject();
  w.EndObject();
  key(w, "scene");
  w.Int(0);
  key(w, "scenes");
  w.StartArray();
  w.StartObject();
  key(w, "name");
  w.String("run");
  key(w, "nodes");
  w.StartArray();
  for (std::size_t i = 0; i < l.bodies + (l.skinned ? 1 : 0); ++i) w.Uint64(i);
  w.EndArray();
  w.EndObject();
  w.EndArray();

  key(w, "nodes");
  w.StartArray();
  for (std::size_t i = 0; i < l.bodies; ++i) {
    const trajectory::BodyInfo& b = meta.bodies[i];
    w.StartObject();
    key(w, "name");
    w.String(b.name.c_str(), static_cast<rapidjson::SizeType>(b.name.size()));
    key(w, "mesh");
    w.Int(p.material_of_body[i]);
    key(w, "translation");
    number_array(w, {p.first[i][0], p.first[i][1], p.first[i][2]});
    key(w, "scale");
    number_array(w, {p.first_scale[i], p.first_scale[i], p.first_scale[i]});
    w.EndObject();
  }
  if (l.skinned) {
    w.StartObject();
    key(w, "name");
    w.String("springs");
    key(w, "mesh");
    w.Int(body_materials);
    key(w, "skin");
    w.Int(0);
    w.EndObject();
  }
  w.EndArray();

  key(w, "meshes");
  w.StartArray();
  for (int m = 0; m < body_materials; ++m) {
    write_mesh(w, m == 0 ? "sphere" : "sphere " + std::to_string(m), {{"POSITION", 0}, {"NORMAL", 1}}, 2, m,
               kModeTriangles);
  }
  if (l.skinned) {
    write_mesh(w, "springs",
               {{"POSITION", spring_accessor}, {"JOINTS_0", spring_accessor + 1}, {"WEIGHTS_0", spring_accessor + 2}},
               spring_accessor + 3, body_materials, kModeLines);
  }
  w.EndArray();

  key(w, "materials");
  w.StartArray();
  for (int m = 0; m <= body_materials; ++m) {
    if (m == body_materials && !l.skinned) break;
    const bool spring = m == body_materials;
    const std::array<float, 3> c = spring ? std::array<float, 3>{0.6F, 0.6F, 0.6F}
                                          : p.colours[static_cast<std::size_t>(m)];
    w.StartObject();
    key(w, "name");
    w.String(spring ? "spring" : ("body " + std::to_string(m)).c_str());
    key(w, "pbrMetallicRoughness");
    w.StartObject();
    key(w, "baseColorFactor");
    number_array(w, {c[0], c[1], c[2], 1.0});
    key(w, "metallicFactor");
    w.Double(0);
    key(w, "roughnessFactor");
    w.Double(0.6);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();

  if (l.skinned) {
    key(w, "skins");
    w.StartArray();
    w.StartObject();
    key(w, "name");
    w.String("bodies");
    key(w, "inverseBindMatrices");
    w.Int(spring_accessor + 4);
    key(w, "joints");
    w.StartArray();
    for (std::size_t i = 0; i < l.bodies; ++i) w.Uint64(i);
    w.EndArray();
    w.EndObject();
    w.EndArray();
  }

  key(w, "animations");
  w.StartArray();
  w.StartObject();
  key(w, "name");
  w.String("run");
  key(w, "samplers");
  w.StartArray();
  const std::size_t channels = l.bodies * (l.scaled ? 2 : 1);  // translations, then scales
  for (std::size_t c = 0; c < channels; ++c) {
    w.StartObject();
    key(w, "input");
    w.Int(3);
    key(w, "output");
    w.Uint64(first_translation + c);
    key(w, "interpolation");
    w.String("LINEAR");
    w.EndObject();
  }
  w.EndArray();
  key(w, "channels");
  w.StartArray();
  for (std::size_t c = 0; c < channels; ++c) {
    w.StartObject();
    key(w, "sampler");
    w.Uint64(c);
    key(w, "target");
    w.StartObject();
    key(w, "node");
    w.Uint64(c % l.bodies);
    key(w, "path");
    w.String(c < l.bodies ? "translation" : "scale");
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndArray();

  key(w, "accessors");
  w.StartArray();
  // The sphere's bounds as written (glTF asks for the exact extremes of a POSITION accessor).
  std::vector<float> sphere_vertices;
  std::vector<std::uint16_t> sphere_indices;
  sphere(sphere_vertices, sphere_indices);
  std::array<float, 3> unit_lo{}, unit_hi{};
  for (std::size_t c = 0; c < 3; ++c) {
    for (std::size_t v = c; v < sphere_vertices.size(); v += 3) {
      unit_lo[c] = std::min(unit_lo[c], sphere_vertices[v]);
      unit_hi[c] = std::max(unit_hi[c], sphere_vertices[v]);
    }
  }
  write_accessor(w, kViewSpherePositions, 0, kFloat, kSphereVertices, "VEC3", &unit_lo, &unit_hi);
  write_accessor(w, kViewSphereNormals, 0, kFloat, kSphereVertices, "VEC3");
  write_accessor(w, kViewSphereIndices, 0, kUnsignedShort, kSphereIndices, "SCALAR");
  const std::array<float, 3> t_lo{p.times.front(), 0, 0}, t_hi{p.times.back(), 0, 0};
  write_accessor(w, kViewTimes, 0, kFloat, l.keyframes, "SCALAR", &t_lo, &t_hi, 1);
  for (std::size_t i = 0; i < l.bodies; ++i) {
    write_accessor(w, kViewTranslations, std::uint64_t{i} * l.keyframes * 12, kFloat, l.keyframes, "VEC3");
  }
  for (std::size_t i = 0; l.scaled && i < l.bodies; ++i) {
    // The scales' view comes after the springs' ones (when there are springs).
    write_accessor(w, l.skinned ? kViewScales : kViewSpringPositions, std::uint64_t{i} * l.keyframes * 12, kFloat,
                   l.keyframes, "VEC3");
  }
  if (l.skinned) {
    write_accessor(w, kViewSpringPositions, 0, kFloat, l.bodies, "VEC3", &lo, &hi);
    write_accessor(w, kViewJoints, 0, kUnsignedShort, l.bodies, "VEC4");
    write_accessor(w, kViewWeights, 0, kFloat, l.bodies, "VEC4");
    write_accessor(w, kViewSpringIndices, 0, kUnsignedInt, l.springs * 2, "SCALAR");
    write_accessor(w, kViewInverseBinds, 0, kFloat, l.bodies, "MAT4");
  }
  w.EndArray();

  key(w, "bufferViews");
  w.StartArray();
  const auto view = [&](std::uint64_t offset, std::uint64_t bytes, int target) {
    w.StartObject();
    key(w, "buffer");
    w.Int(0);
    if (offset != 0) {
      key(w, "byteOffset");
      w.Uint64(offset);
    }
    key(w, "byteLength");
    w.Uint64(bytes);
    if (target != 0) {
      key(w, "target");
      w.Int(target);
    }
    w.EndObject();
  };
  view(l.sphere_positions, kSphereVertices * 12, kArrayBuffer);
  view(l.sphere_normals, kSphereVertices * 12, kArrayBuffer);
  view(l.sphere_indices, kSphereIndices * 2, kElementArrayBuffer);
  view(l.times, std::uint64_t{l.keyframes} * 4, 0);
  view(l.translations, std::uint64_t{l.bodies} * l.keyframes * 12, 0);
  if (l.skinned) {
    view(l.spring_positions, std::uint64_t{l.bodies} * 12, kArrayBuffer);
    view(l.joints, std::uint64_t{l.bodies} * 8, kArrayBuffer);
    view(l.weights, std::uint64_t{l.bodies} * 16, kArrayBuffer);
    view(l.spring_indices, std::uint64_t{l.springs} * 8, kElementArrayBuffer);
    view(l.inverse_binds, std::uint64_t{l.bodies} * 64, 0);
  }
  if (l.scaled) view(l.scales, std::uint64_t{l.bodies} * l.keyframes * 12, 0);
  w.EndArray();

  key(w, "buffers");
  w.StartArray();
  w.StartObject();
  key(w, "byteLength");
  w.Uint64(l.end);
  w.EndObject();
  w.EndArray();
  w.EndObject();

  p.json.assign(sb.GetString(), sb.GetSize());
  p.json.resize(pad4(p.json.size()), ' ');
  return p;
}

void check_exportable(const trajectory::Reader& reader, const std::string& run) {
  if (reader.meta().body_count() == 0) throw InputError(FileLoc{run}, "the run has no bodies: nothing to export");
  if (reader.frame_count() == 0) throw InputError(FileLoc{run}, "the run has no frames: nothing to export");
}

/// Writes little-endian values (the glb byte order) into the output, padding each part to 4 bytes.
class BinWriter {
 public:
  explicit BinWriter(AtomicOutputFile& out) : out_(out) {}
  template <typename T>
  void put(std::span<const T> values) {
    static_assert(std::endian::native == std::endian::little, "glb is little-endian");
    out_.write(values.data(), values.size_bytes());
    written_ += values.size_bytes();
  }
  void u32(std::uint32_t v) { put(std::span<const std::uint32_t>(&v, 1)); }
  void align(std::uint64_t expected_at) {
    static constexpr std::array<char, 4> kZeros{};
    out_.write(kZeros.data(), pad4(written_) - written_);
    written_ = pad4(written_);
    KANOKO_ASSERT(written_ == expected_at, "glb parts follow the layout");
  }
  void reset() { written_ = 0; }

 private:
  AtomicOutputFile& out_;
  std::uint64_t written_ = 0;
};

}  // namespace

std::vector<std::size_t> gltf_keyframes(const trajectory::Reader& reader, double fps) {
  std::vector<std::size_t> frames;
  const std::size_t n = reader.frame_count();
  if (n == 0) return frames;
  if (!(fps > 0)) {
    frames.resize(n);
    for (std::size_t k = 0; k < n; ++k) frames[k] = k;
    return frames;
  }
  const double t0 = reader.frame_time(0);
  double next = t0;
  for (std::size_t k = 0; k < n; ++k) {
    const double t = reader.frame_time(k);
    if (t >= next || k + 1 == n) {
      frames.push_back(k);
      // The next tick of the grid t0 + j / fps after t.
      next = t0 + (std::floor((t - t0) * fps + 1e-9) + 1) / fps;
    }
  }
  return frames;
}

std::uint64_t gltf_size(const trajectory::Reader& reader, const std::vector<std::size_t>& keyframes) {
  if (reader.meta().body_count() == 0 || keyframes.empty()) return 0;
  return make_plan(reader, keyframes).file_bytes();
}

GltfSummary write_gltf(const trajectory::Reader& reader, const std::string& run, const GltfOptions& options,
                       const std::filesystem::path& output) {
  check_exportable(reader, run);
  const Plan plan = make_plan(reader, gltf_keyframes(reader, options.fps));
  if (plan.file_bytes() > std::numeric_limits<std::uint32_t>::max()) {
    throw InputError(FileLoc{run}, "the glTF would take " + std::to_string(plan.file_bytes()) +
                                       " bytes, beyond the 4 GiB a .glb can hold: keep fewer keyframes with --fps");
  }
  const Layout& l = plan.layout;
  const trajectory::Metadata& meta = reader.meta();

  AtomicOutputFile out(output);
  BinWriter bin(out);
  bin.u32(kGlbMagic);
  bin.u32(kGlbVersion);
  bin.u32(static_cast<std::uint32_t>(plan.file_bytes()));
  bin.u32(static_cast<std::uint32_t>(plan.json.size()));
  bin.u32(kChunkJson);
  out.write(plan.json);
  bin.u32(static_cast<std::uint32_t>(l.end));
  bin.u32(kChunkBin);
  bin.reset();

  std::vector<float> vertices;
  std::vector<std::uint16_t> indices;
  sphere(vertices, indices);
  bin.put(std::span<const float>(vertices));
  bin.align(l.sphere_normals);
  bin.put(std::span<const float>(vertices));  // a unit sphere's normals are its positions
  bin.align(l.sphere_indices);
  bin.put(std::span<const std::uint16_t>(indices));
  bin.align(l.times);
  bin.put(std::span<const float>(plan.times));
  bin.align(l.translations);

  // Per body, its keyframes (a VEC3 of `value(frame, frame 0, body)` each); bodies gathered in
  // chunks, one pass over the frames per chunk.
  const auto per_body = [&](const auto& value) {
    const std::size_t per_chunk = std::max<std::size_t>(1, kTranslationChunkBytes / (l.keyframes * 12));
    const trajectory::FrameView run0 = reader.frame(0);
    std::vector<float> chunk;
    for (std::size_t first = 0; first < l.bodies; first += per_chunk) {
      const std::size_t count = std::min(per_chunk, l.bodies - first);
      chunk.assign(count * l.keyframes * 3, 0.0F);
      for (std::size_t j = 0; j < l.keyframes; ++j) {
        check_interrupt();
        const trajectory::FrameView f = reader.frame(plan.keyframes[j]);
        for (std::size_t i = 0; i < count; ++i) {
          const std::array<float, 3> v = value(f, run0, first + i);
          std::copy(v.begin(), v.end(), chunk.begin() + static_cast<std::ptrdiff_t>((i * l.keyframes + j) * 3));
        }
      }
      bin.put(std::span<const float>(chunk));
    }
  };
  per_body([](const trajectory::FrameView& f, const trajectory::FrameView&, std::size_t i) {
    const auto j = static_cast<Eigen::Index>(i);
    return std::array<float, 3>{static_cast<float>(f.positions(0, j)), static_cast<float>(f.positions(1, j)),
                                static_cast<float>(f.positions(2, j))};
  });
  bin.align(l.scales);
  if (l.scaled) {
    const int mass_stat = meta.stat_index(trajectory::stat::kMass);
    per_body([&](const trajectory::FrameView& f, const trajectory::FrameView& f0, std::size_t i) {
      const float r = drawn_radius(meta, mass_stat, f, f0, i);
      return std::array<float, 3>{r, r, r};
    });
  }

  if (l.skinned) {
    bin.align(l.spring_positions);
    for (const auto& x : plan.first) bin.put(std::span<const float>(x));
    bin.align(l.joints);
    for (std::size_t i = 0; i < l.bodies; ++i) {
      const std::array<std::uint16_t, 4> j{static_cast<std::uint16_t>(i), 0, 0, 0};
      bin.put(std::span<const std::uint16_t>(j));
    }
    bin.align(l.weights);
    const std::array<float, 4> weight{1, 0, 0, 0};
    for (std::size_t i = 0; i < l.bodies; ++i) bin.put(std::span<const float>(weight));
    bin.align(l.spring_indices);
    for (const auto& e : meta.edges) bin.put(std::span<const std::uint32_t>(e));
    bin.align(l.inverse_binds);
    // The bind pose is the first keyframe: the inverse of a translation to it (column-major).
    for (const auto& x : plan.first) {
      const std::array<float, 16> m{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, -x[0], -x[1], -x[2], 1};
      bin.put(std::span<const float>(m));
    }
  }
  bin.align(l.end);
  KANOKO_ASSERT(out.size() == plan.file_bytes(), "the glb is as long as planned");
  out.commit();

  GltfSummary s;
  s.bodies = l.bodies;
  s.keyframes = l.keyframes;
  s.springs = l.springs;
  s.materials = plan.colours.size();
  s.bytes = plan.file_bytes();
  if (!l.skinned && !meta.edges.empty()) {
    s.note = "springs left out: a glTF skin's joints are numbered in 16 bits, and the run has " +
             std::to_string(l.bodies) + " bodies (more than 65536)";
  }
  return s;
}

}  // namespace kanoko::exporting
