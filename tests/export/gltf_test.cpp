// `kanoko export --gltf`: the .glb read back by an independent reader (assimp, Debian's
// assimp-utils, dumping the scene as JSON), compared with the trajectory; the GLB container checked
// byte by byte; bad inputs leave nothing behind.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "src/trajectory/trajectory.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko {
namespace KANOKO_UNITY_ID {

using test::read_text;
using test::run_kanoko;
using test::TempDir;

constexpr int kBodies = 4;
constexpr int kFrames = 41;        // t = 0 .. 4 s every 0.1 s
constexpr double kFrameStep = 0.1;
const char* const kNames[kBodies] = {"pe0", "pe 1", "n(1,2,3)", "last"};

/// Body i at time t: each body moves on its own curve, so a swapped body or frame shows.
Eigen::Vector3d position(int i, double t) {
  return {std::cos(t + i) * (i + 1), 0.5 * t * t - i, std::sin(2 * t) + 3.0 * i};
}

/// Body i's mass at time t: body 0 keeps its mass, the others grow (the drawn size follows).
double mass(int i, double t, bool growing) { return growing ? 2.0 + i * t : 2.0; }

/// Body i's drawn radius at t, as the desktop viewer draws it: 0.25 × cbrt(m / m(0)).
double drawn_radius(int i, double t, bool growing) { return 0.25 * std::cbrt(mass(i, t, growing) / mass(i, 0, growing)); }

void write_run(const std::filesystem::path& path, bool growing_mass = true) {
  trajectory::Metadata meta;
  for (int i = 0; i < kBodies; ++i) {
    trajectory::BodyInfo b;
    b.name = kNames[i];
    // Red, green, blue, blue: the last body shares the third one's material.
    b.colour_rgb = {i == 0 ? 1.0F : 0.0F, i == 1 ? 1.0F : 0.0F, i >= 2 ? 1.0F : 0.0F};
    b.radius = 0.25F;
    meta.bodies.push_back(b);
  }
  meta.edges = {{0U, 1U}, {1U, 2U}, {2U, 3U}};
  meta.stat_names = {trajectory::stat::kLoad, trajectory::stat::kMass};
  meta.dt_s = kFrameStep;
  meta.interval_s = 1;
  meta.trace_end_s = kFrameStep * (kFrames - 1);
  meta.integrator = "rk4";
  trajectory::Writer writer(path, meta);
  for (int k = 0; k < kFrames; ++k) {
    const double t = kFrameStep * k;
    Eigen::Matrix3Xd p(3, kBodies);
    for (int i = 0; i < kBodies; ++i) p.col(i) = position(i, t);
    Eigen::MatrixXd stats = Eigen::MatrixXd::Ones(2, kBodies);
    for (int i = 0; i < kBodies; ++i) stats(1, i) = mass(i, t, growing_mass);
    writer.append_frame(t, p, Eigen::Matrix3Xd::Zero(3, kBodies), stats);
  }
  writer.commit();
}

std::uint32_t u32_at(const std::string& bytes, std::size_t at) {
  std::uint32_t v = 0;
  std::memcpy(&v, bytes.data() + at, 4);
  return v;
}

/// The GLB container: header, a JSON chunk, a BIN chunk, lengths and padding as glTF 2.0 says.
/// Returns the JSON chunk's text.
std::string check_glb_container(const std::string& bytes) {
  EXPECT_GE(bytes.size(), 28U);
  if (bytes.size() < 28) return "";
  EXPECT_EQ(u32_at(bytes, 0), 0x46546C67U) << "magic glTF";
  EXPECT_EQ(u32_at(bytes, 4), 2U) << "version";
  EXPECT_EQ(u32_at(bytes, 8), bytes.size()) << "total length";
  const std::uint32_t json_length = u32_at(bytes, 12);
  EXPECT_EQ(u32_at(bytes, 16), 0x4E4F534AU) << "first chunk is JSON";
  EXPECT_EQ(json_length % 4, 0U);
  const std::size_t bin_at = 20 + std::size_t{json_length};
  EXPECT_LE(bin_at + 8, bytes.size());
  if (bin_at + 8 > bytes.size()) return "";
  const std::uint32_t bin_length = u32_at(bytes, bin_at);
  EXPECT_EQ(u32_at(bytes, bin_at + 4), 0x004E4942U) << "second chunk is BIN";
  EXPECT_EQ(bin_length % 4, 0U);
  EXPECT_EQ(bin_at + 8 + bin_length, bytes.size()) << "nothing after the BIN chunk";
  const std::string json = bytes.substr(20, json_length);
  rapidjson::Document d;
  d.Parse(json.c_str(), json.size());
  EXPECT_FALSE(d.HasParseError());
  if (d.HasParseError()) return json;
  EXPECT_EQ(d["buffers"][0]["byteLength"].GetUint64(), bin_length);
  // Every buffer view inside the buffer, every accessor inside its view.
  for (const auto& v : d["bufferViews"].GetArray()) {
    const std::uint64_t offset = v.HasMember("byteOffset") ? v["byteOffset"].GetUint64() : 0;
    EXPECT_EQ(offset % 4, 0U);
    EXPECT_LE(offset + v["byteLength"].GetUint64(), bin_length);
  }
  const std::map<std::string, int> components{{"SCALAR", 1}, {"VEC3", 3}, {"VEC4", 4}, {"MAT4", 16}};
  for (const auto& a : d["accessors"].GetArray()) {
    const auto& v = d["bufferViews"][a["bufferView"].GetUint()];
    const std::uint64_t offset = a.HasMember("byteOffset") ? a["byteOffset"].GetUint64() : 0;
    const int bytes_per = a["componentType"].GetInt() == 5123 ? 2 : 4;
    const auto n = static_cast<std::uint64_t>(components.at(a["type"].GetString()));
    EXPECT_LE(offset + a["count"].GetUint64() * n * static_cast<std::uint64_t>(bytes_per), v["byteLength"].GetUint64());
    if (!a.HasMember("min") || a["componentType"].GetInt() != 5126) continue;
    // Declared bounds are the data's exact extremes (glTF requires them for positions and times).
    const std::size_t data = bin_at + 8 + (v.HasMember("byteOffset") ? v["byteOffset"].GetUint64() : 0) + offset;
    for (std::uint64_t c = 0; c < n; ++c) {
      float lo = std::numeric_limits<float>::infinity(), hi = -lo;
      for (std::uint64_t i = 0; i < a["count"].GetUint64(); ++i) {
        float x = 0;
        std::memcpy(&x, bytes.data() + data + (i * n + c) * 4, 4);
        lo = std::min(lo, x);
        hi = std::max(hi, x);
      }
      EXPECT_EQ(a["min"][static_cast<rapidjson::SizeType>(c)].GetFloat(), lo);
      EXPECT_EQ(a["max"][static_cast<rapidjson::SizeType>(c)].GetFloat(), hi);
    }
  }
  return json;
}

/// Finds a node by name in assimp's node tree.
const rapidjson::Value* find_node(const rapidjson::Value& node, const std::string& name) {
  if (node.HasMember("name") && name == node["name"].GetString()) return &node;
  if (!node.HasMember("children")) return nullptr;
  for (const auto& c : node["children"].GetArray()) {
    if (const rapidjson::Value* n = find_node(c, name)) return n;
  }
  return nullptr;
}

/// Dumps `glb` with `assimp export` as assimp's JSON and parses it.
void assimp_dump(const std::filesystem::path& glb, const std::filesystem::path& json, rapidjson::Document& d) {
  const test::CommandResult r = test::run_program({"assimp", "export", glb.string(), json.string(), "-fassjson"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string text = read_text(json);
  d.Parse(text.c_str(), text.size());
  ASSERT_FALSE(d.HasParseError()) << text.substr(0, 400);
}

class GltfExport : public ::testing::Test {
 protected:
  void SetUp() override { write_run(run); }
  TempDir dir;
  std::filesystem::path run = dir / "run.kntj";
};

TEST_F(GltfExport, AssimpReadsBodiesAndKeyframesBack) {
  const auto r = run_kanoko({"export", run.string(), "--gltf", "-o", (dir / "out.glb").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("4 bodies, 41 keyframes of 41 frames, 3 springs"), std::string::npos) << r.err;
  const std::string json = check_glb_container(read_text(dir / "out.glb"));

  rapidjson::Document d;
  assimp_dump(dir / "out.glb", dir / "out.assjson", d);
  for (const char* name : kNames) EXPECT_NE(find_node(d["rootnode"], name), nullptr) << name;
  ASSERT_TRUE(d.HasMember("animations"));
  ASSERT_EQ(d["animations"].Size(), 1U);
  const auto& anim = d["animations"][0];
  const double ticks = anim["tickspersecond"].GetDouble() > 0 ? anim["tickspersecond"].GetDouble() : 1.0;
  std::map<std::string, int> seen;
  for (const auto& channel : anim["channels"].GetArray()) {
    const std::string name = channel["name"].GetString();
    int body = -1;
    for (int i = 0; i < kBodies; ++i) body = name == kNames[i] ? i : body;
    if (body < 0) continue;
    ++seen[name];
    const auto& keys = channel["positionkeys"];
    ASSERT_EQ(keys.Size(), static_cast<unsigned>(kFrames)) << name;
    for (rapidjson::SizeType k = 0; k < kFrames; ++k) {
      const double t = keys[k][0].GetDouble() / ticks;
      EXPECT_NEAR(t, kFrameStep * k, 1e-5) << name << " key " << k;
      const Eigen::Vector3d expected = position(body, kFrameStep * k);
      for (rapidjson::SizeType c = 0; c < 3; ++c) {
        // Stored as float, printed by assimp with 6 significant digits: within 1e-5 relative.
        EXPECT_NEAR(keys[k][1][c].GetDouble(), expected(c), 1e-5 * std::max(1.0, std::abs(expected(c))))
            << name << " key " << k << " axis " << c;
      }
    }
    // The size follows the mass as the desktop viewer draws it (a scale channel: masses change).
    const auto& scales = channel["scalingkeys"];
    ASSERT_EQ(scales.Size(), static_cast<unsigned>(kFrames)) << name;
    for (rapidjson::SizeType k = 0; k < kFrames; ++k) {
      EXPECT_NEAR(scales[k][0].GetDouble() / ticks, kFrameStep * k, 1e-5) << name << " scale key " << k;
      for (rapidjson::SizeType c = 0; c < 3; ++c) {
        EXPECT_NEAR(scales[k][1][c].GetDouble(), drawn_radius(body, kFrameStep * k, true), 1e-5)
            << name << " scale key " << k << " axis " << c;
      }
    }
  }
  for (const char* name : kNames) EXPECT_EQ(seen[name], 1) << "one translation channel for " << name;

  // The springs: a line mesh whose bones are the bodies, each vertex weighted 1 to its body.
  bool springs = false;
  for (const auto& mesh : d["meshes"].GetArray()) {
    if (!mesh.HasMember("bones")) continue;
    springs = true;
    EXPECT_EQ(mesh["primitivetypes"].GetInt(), 2) << "aiPrimitiveType_LINE";
    EXPECT_EQ(mesh["faces"].Size(), 3U) << "one line per spring";
    EXPECT_EQ(mesh["bones"].Size(), static_cast<unsigned>(kBodies));
    for (const auto& bone : mesh["bones"].GetArray()) {
      ASSERT_EQ(bone["weights"].Size(), 1U) << bone["name"].GetString();
      EXPECT_DOUBLE_EQ(bone["weights"][0][1].GetDouble(), 1.0);
      EXPECT_NE(find_node(d["rootnode"], bone["name"].GetString()), nullptr) << "bone of a body node";
    }
  }
  EXPECT_TRUE(springs) << "a skinned springs mesh";
  // Three distinct colours: three body materials and the spring's (and assimp's unnamed default).
  std::map<std::string, std::vector<double>> colours;
  for (const auto& m : d["materials"].GetArray()) {
    std::string name;
    std::vector<double> colour;
    for (const auto& p : m["properties"].GetArray()) {
      const std::string k = p["key"].GetString();
      if (k == "?mat.name") name = p["value"].GetString();
      if (k == "$clr.base") {
        for (const auto& c : p["value"].GetArray()) colour.push_back(c.GetDouble());
      }
    }
    if (!name.empty()) colours[name] = colour;
  }
  EXPECT_EQ(colours.size(), 4U);
  EXPECT_EQ(colours["body 0"], (std::vector<double>{1, 0, 0, 1}));
  EXPECT_EQ(colours["body 1"], (std::vector<double>{0, 1, 0, 1}));
  EXPECT_EQ(colours["body 2"], (std::vector<double>{0, 0, 1, 1}));
  EXPECT_TRUE(colours.contains("spring"));
}

TEST_F(GltfExport, ConstantMassesGiveConstantScales) {
  write_run(run, false);
  const auto r = run_kanoko({"export", run.string(), "--gltf", "-o", (dir / "out.glb").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string json = check_glb_container(read_text(dir / "out.glb"));
  rapidjson::Document glb;
  glb.Parse(json.c_str(), json.size());
  for (const auto& channel : glb["animations"][0]["channels"].GetArray()) {
    EXPECT_STREQ(channel["target"]["path"].GetString(), "translation") << "no scale channel";
  }
  rapidjson::Document d;
  assimp_dump(dir / "out.glb", dir / "out.assjson", d);
  for (const char* name : kNames) {
    const rapidjson::Value* node = find_node(d["rootnode"], name);
    ASSERT_NE(node, nullptr) << name;
    // assimp's node transformation (row-major 4x4): the scale on the diagonal.
    const auto& m = (*node)["transformation"];
    for (rapidjson::SizeType c = 0; c < 3; ++c) EXPECT_NEAR(m[c * 5].GetDouble(), 0.25, 1e-6) << name;
  }
}

TEST_F(GltfExport, GlbNameImpliesGltfAndFpsDecimates) {
  const auto r = run_kanoko({"export", run.string(), "-o", (dir / "out.glb").string(), "--fps", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Ticks every 0.5 s over 0..4 s: 9 keyframes.
  EXPECT_NE(r.err.find("9 keyframes of 41 frames"), std::string::npos) << r.err;
  check_glb_container(read_text(dir / "out.glb"));
  rapidjson::Document d;
  assimp_dump(dir / "out.glb", dir / "out.assjson", d);
  const auto& anim = d["animations"][0];
  const double ticks = anim["tickspersecond"].GetDouble() > 0 ? anim["tickspersecond"].GetDouble() : 1.0;
  const auto& keys = anim["channels"][0]["positionkeys"];
  ASSERT_EQ(keys.Size(), 9U);
  for (unsigned k = 0; k < keys.Size(); ++k) EXPECT_NEAR(keys[k][0].GetDouble() / ticks, 0.5 * k, 1e-5);
}

TEST_F(GltfExport, BeyondTheBudgetIsRefusedBeforeWriting) {
  const auto r = run_kanoko({"export", run.string(), "--gltf", "-o", (dir / "out.glb").string(), "--max-output", "4k"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(run.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("more than 4 KiB (--max-output)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--fps"), std::string::npos) << r.err;
  EXPECT_EQ(test::list_dir(dir.path()), std::vector<std::string>{"run.kntj"});
  // The same with a budget that fits: the estimate is the size written.
  const auto ok = run_kanoko({"export", run.string(), "--gltf", "-o", (dir / "out.glb").string(), "--max-output", "1M"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST_F(GltfExport, BadInputsLeaveNothingBehind) {
  // A corrupt run: a flipped byte in the frames fails its block's checksum.
  std::string bytes = read_text(run);
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x5A);
  test::write_text(dir / "bad.kntj", bytes);
  auto r = run_kanoko({"export", (dir / "bad.kntj").string(), "--gltf", "-o", (dir / "out.glb").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("bad.kntj"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"bad.kntj", "run.kntj"}));

  // A full disk while writing (no more than 1 KiB per file): an error naming the output, no file.
  r = test::run_kanoko_with_file_limit(2, {"export", run.string(), "--gltf", "-o", (dir / "out.glb").string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("out.glb"), std::string::npos) << r.err;
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"bad.kntj", "run.kntj"}));

  // An output in a missing folder, and an output that is a folder.
  r = run_kanoko({"export", run.string(), "--gltf", "-o", (dir / "no" / "out.glb").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("out.glb"), std::string::npos) << r.err;
  r = run_kanoko({"export", run.string(), "--gltf", "-o", dir.path().string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"bad.kntj", "run.kntj"}));

  // --fps without the glTF export, and a bad --fps.
  r = run_kanoko({"export", run.string(), "-o", (dir / "out.csv").string(), "--fps", "5"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--fps applies to the glTF export"), std::string::npos) << r.err;
  r = run_kanoko({"export", run.string(), "--gltf", "-o", (dir / "out.glb").string(), "--fps", "0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--fps"), std::string::npos) << r.err;
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"bad.kntj", "run.kntj"}));
}

}  // namespace
}  // namespace kanoko
