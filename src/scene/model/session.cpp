#include "src/scene/model/session.hpp"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "src/base/error.hpp"
#include "src/base/json.hpp"

namespace kanoko::scene {

namespace {

void put_matrix(std::ostringstream& o, const Session::Matrix& m) {
  o << "[";
  for (std::size_t k = 0; k < m.size(); ++k) o << (k == 0 ? "" : ", ") << m[k];
  o << "]";
}

/// Line and column of a byte offset in `text` (1-based).
FileLoc at_offset(const std::string& name, const std::string& text, std::size_t offset) {
  std::int64_t line = 1;
  std::int64_t column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return FileLoc(name, line, column);
}

class Fields {
 public:
  Fields(const rapidjson::Value& object, std::string name) : o_(object), name_(std::move(name)) {}

  [[noreturn]] void fail(const char* key, const std::string& what) const {
    throw InputError(FileLoc::in_record(name_, key), what);
  }
  const rapidjson::Value* get(const char* key) const {
    const auto it = o_.FindMember(key);
    return it == o_.MemberEnd() || it->value.IsNull() ? nullptr : &it->value;
  }
  void boolean(const char* key, bool& out) const {
    if (const auto* v = get(key)) {
      if (!v->IsBool()) fail(key, "expected true or false");
      out = v->GetBool();
    }
  }
  void number(const char* key, double& out) const {
    if (const auto* v = get(key)) {
      if (!v->IsNumber() || !std::isfinite(v->GetDouble())) fail(key, "expected a finite number");
      out = v->GetDouble();
    }
  }
  void text(const char* key, std::string& out) const {
    if (const auto* v = get(key)) {
      if (!v->IsString() || v->GetStringLength() > 64) fail(key, "expected a short string");
      out = v->GetString();
    }
  }
  void pair(const char* key, std::optional<std::pair<double, double>>& out) const {
    if (const auto* v = get(key)) {
      if (!v->IsArray() || v->Size() != 2 || !(*v)[0].IsNumber() || !(*v)[1].IsNumber()) {
        fail(key, "expected [from, to] in seconds");
      }
      out = std::make_pair((*v)[0].GetDouble(), (*v)[1].GetDouble());
    }
  }
  static std::optional<Session::Matrix> matrix(const rapidjson::Value& v) {
    if (!v.IsArray() || v.Size() != 16) return std::nullopt;
    Session::Matrix m{};
    for (rapidjson::SizeType k = 0; k < 16; ++k) {
      if (!v[k].IsNumber() || !std::isfinite(v[k].GetDouble())) return std::nullopt;
      m[k] = v[k].GetDouble();
    }
    return m;
  }

 private:
  const rapidjson::Value& o_;
  std::string name_;
};

}  // namespace

std::string session_json(const Session& s) {
  std::ostringstream o;
  o.precision(17);
  o << "{\n  \"kanoko_session\": " << Session::kVersion << ",\n";
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(s.run_hash));
  o << "  \"run\": " << json_string(hash) << ",\n";
  o << "  \"camera\": ";
  if (s.camera) {
    put_matrix(o, *s.camera);
  } else {
    o << "null";
  }
  o << ",\n  \"bookmarks\": [";
  for (std::size_t k = 0; k < s.bookmarks.size(); ++k) {
    o << (k == 0 ? "" : ", ");
    if (s.bookmarks[k]) {
      put_matrix(o, *s.bookmarks[k]);
    } else {
      o << "null";
    }
  }
  o << "],\n";
  const auto b = [](bool v) { return v ? "true" : "false"; };
  o << "  \"side\": " << b(s.side) << ", \"help\": " << b(s.help) << ", \"timeline\": " << b(s.timeline)
    << ", \"frame_rate\": " << b(s.frame_rate) << ", \"side_width_px\": " << s.side_width_px << ",\n";
  o << "  \"labels\": " << b(s.labels) << ", \"grid\": " << b(s.grid) << ", \"springs\": " << json_string(s.spring_colours)
    << ", \"flashes\": " << b(s.flashes) << ", \"trail_s\": " << s.trail_s << ", \"body_scale\": " << s.body_scale << ",\n";
  o << "  \"selected_body\": ";
  if (s.selected_body) {
    o << *s.selected_body;
  } else {
    o << "null";
  }
  o << ",\n  \"time_s\": " << s.time_s << ", \"paused\": " << b(s.paused) << ", \"speed\": " << s.speed
    << ", \"loop\": " << b(s.loop) << ", \"reversed\": " << b(s.reversed) << ",\n";
  const auto pair = [&](const std::optional<std::pair<double, double>>& p) {
    if (p) {
      o << "[" << p->first << ", " << p->second << "]";
    } else {
      o << "null";
    }
  };
  o << "  \"view_range\": ";
  pair(s.view_range);
  o << ", \"range\": ";
  pair(s.range);
  o << ",\n  \"source_paths\": [";
  for (std::size_t k = 0; k < s.source_paths.size(); ++k) o << (k == 0 ? "" : ", ") << json_string(s.source_paths[k]);
  o << "]\n}\n";
  return o.str();
}

Session parse_session(const std::string& text, const std::string& name) {
  rapidjson::Document d;
  d.Parse(text.c_str(), text.size());
  if (d.HasParseError()) {
    throw InputError(at_offset(name, text, d.GetErrorOffset()),
                     std::string("not a session file: ") + rapidjson::GetParseError_En(d.GetParseError()));
  }
  if (!d.IsObject() || !d.HasMember("kanoko_session") || !d["kanoko_session"].IsInt()) {
    throw InputError(FileLoc(name), "not a Kanoko session file (no \"kanoko_session\" version)");
  }
  const int version = d["kanoko_session"].GetInt();
  if (version > Session::kVersion || version < 1) {
    throw InputError(FileLoc::in_record(name, "kanoko_session"),
                     "session version " + std::to_string(version) + " is not one this Kanoko reads (it reads " +
                         std::to_string(Session::kVersion) + ")");
  }
  Session s;
  const Fields f(d, name);
  std::string hash;
  f.text("run", hash);
  char* end = nullptr;
  s.run_hash = std::strtoull(hash.c_str(), &end, 16);
  if (hash.empty() || end == nullptr || *end != '\0') f.fail("run", "expected the run's hash as hexadecimal");
  if (const auto* v = f.get("camera")) {
    s.camera = Fields::matrix(*v);
    if (!s.camera) f.fail("camera", "expected 16 finite numbers");
  }
  if (const auto* v = f.get("bookmarks")) {
    if (!v->IsArray() || v->Size() > s.bookmarks.size()) f.fail("bookmarks", "expected up to 9 cameras");
    for (rapidjson::SizeType k = 0; k < v->Size(); ++k) {
      if ((*v)[k].IsNull()) continue;
      s.bookmarks[k] = Fields::matrix((*v)[k]);
      if (!s.bookmarks[k]) f.fail("bookmarks", "expected 16 finite numbers per camera");
    }
  }
  const std::pair<const char*, bool*> flags[] = {
      {"side", &s.side},   {"help", &s.help},       {"timeline", &s.timeline}, {"frame_rate", &s.frame_rate},
      {"labels", &s.labels}, {"grid", &s.grid},     {"flashes", &s.flashes},   {"paused", &s.paused},
      {"loop", &s.loop},   {"reversed", &s.reversed}};
  for (const auto& [key, out] : flags) f.boolean(key, *out);
  const std::pair<const char*, double*> numbers[] = {{"side_width_px", &s.side_width_px}, {"trail_s", &s.trail_s},
                                                     {"body_scale", &s.body_scale},       {"time_s", &s.time_s},
                                                     {"speed", &s.speed}};
  for (const auto& [key, out] : numbers) f.number(key, *out);
  f.text("springs", s.spring_colours);
  if (const auto* v = f.get("selected_body")) {
    if (!v->IsUint64()) f.fail("selected_body", "expected a body index");
    s.selected_body = static_cast<std::size_t>(v->GetUint64());
  }
  f.pair("view_range", s.view_range);
  f.pair("range", s.range);
  if (const auto* v = f.get("source_paths")) {
    constexpr rapidjson::SizeType kMaxPaths = 64;
    if (!v->IsArray() || v->Size() > kMaxPaths) f.fail("source_paths", "expected a list of up to 64 folders");
    for (const auto& p : v->GetArray()) {
      if (!p.IsString() || p.GetStringLength() == 0 || p.GetStringLength() > 4096) {
        f.fail("source_paths", "expected folder names (strings of 1 to 4096 bytes)");
      }
      s.source_paths.emplace_back(p.GetString(), p.GetStringLength());
    }
  }
  return s;
}

std::filesystem::path config_folder() {
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x != nullptr && *x != '\0') {
    return std::filesystem::path(x) / "kanoko";
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    return std::filesystem::path(h) / ".config" / "kanoko";
  }
  return {};
}

std::filesystem::path default_session_path(std::uint64_t run_hash) {
  const std::filesystem::path folder = config_folder();
  if (folder.empty()) return {};
  char name[40];
  std::snprintf(name, sizeof name, "%016llx.json", static_cast<unsigned long long>(run_hash));
  return folder / "sessions" / name;
}

}  // namespace kanoko::scene
