#include "src/scene/layers/visual_options.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string>
#include <system_error>
#include <utility>

#include "src/base/error.hpp"
#include "src/scene/layers/scene_graph.hpp"

namespace kanoko::scene {

using layers::to_vec3;

BodyStyle body_style_for(std::size_t bodies) {
  if (bodies > kCloudThreshold) return BodyStyle::cloud;
  if (bodies > kImpostorThreshold) return BodyStyle::impostors;
  return BodyStyle::meshes;
}

namespace {

// Names of the visual choices, in the order the key and the panel cycle through them.
constexpr std::array<std::pair<SpringColours, const char*>, 3> kSpringColourNames{
    {{SpringColours::tension, "tension"}, {SpringColours::traffic, "traffic"}, {SpringColours::off, "off"}}};
constexpr std::array<std::pair<BodyTextures, const char*>, 3> kBodyTextureNames{
    {{BodyTextures::none, "none"}, {BodyTextures::host, "host"}, {BodyTextures::body, "body"}}};

template <class E, std::size_t N>
const char* name_in(const std::array<std::pair<E, const char*>, N>& names, E value) {
  for (const auto& [v, name] : names) {
    if (v == value) return name;
  }
  return names.front().second;
}

template <class E, std::size_t N>
E parse_name_in(const std::array<std::pair<E, const char*>, N>& names, std::string_view text, std::string_view option,
                std::string_view what) {
  std::string expected;
  for (const auto& [v, name] : names) {
    if (text == name) return v;
    expected += (expected.empty() ? "" : ", ") + std::string(name);
  }
  throw InputError(FileLoc{std::string(option)},
                   "unknown " + std::string(what) + " '" + std::string(text) + "'; expected one of " + expected);
}

}  // namespace

SpringColours next_spring_colours(SpringColours c) {
  for (std::size_t k = 0; k < kSpringColourNames.size(); ++k) {
    if (kSpringColourNames[k].first == c) return kSpringColourNames[(k + 1) % kSpringColourNames.size()].first;
  }
  return SpringColours::tension;
}

const char* to_string(SpringColours c) { return name_in(kSpringColourNames, c); }
const char* to_string(BodyTextures t) { return name_in(kBodyTextureNames, t); }

BodyTextures parse_body_textures(std::string_view text, std::string_view option) {
  return parse_name_in(kBodyTextureNames, text, option, "body textures");
}

SpringColours parse_spring_colours(std::string_view text, std::string_view option) {
  return parse_name_in(kSpringColourNames, text, option, "spring colouring");
}

osg::Vec3 traffic_colour(double bytes, double max_bytes) {
  return to_vec3(trajectory::traffic_colour(bytes, max_bytes));
}

osg::Vec3 tension_colour(double length, double length0) {
  return to_vec3(trajectory::tension_colour(length, length0));
}

std::filesystem::path body_texture_folder() {
  if (const char* env = std::getenv("KANOKO_ASSETS"); env != nullptr && *env != '\0') {
    return std::filesystem::path(env) / "textures";
  }
  return std::filesystem::path(KANOKO_ASSETS_DIR) / "textures";
}

std::vector<std::filesystem::path> body_texture_files() {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(body_texture_folder(), ec)) {
    if (entry.path().extension() == ".png") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace kanoko::scene
