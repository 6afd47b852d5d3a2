#include "src/trace/native_writer.hpp"

#include <charconv>

#include "src/base/check.hpp"

namespace kanoko::trace {
namespace {

std::string number(double v) {
  char buf[40];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace

std::string quote_native_string(std::string_view s) {
  bool bare = !s.empty();
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '"' || c == '#' || c == '=' || c == '\\' || c == '\n' || c == '\r') bare = false;
  }
  if (bare) return std::string(s);
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += (c == '\n' || c == '\r') ? ' ' : c;
  }
  q += '"';
  return q;
}

NativeWriter::NativeWriter(std::ostream& out, const std::string& comment) : out_(out) {
  out_ << "kntr 1\n";
  if (!comment.empty()) {
    // Every line of the comment stays a comment line.
    out_ << "# ";
    for (std::size_t i = 0; i < comment.size(); ++i) {
      const char c = comment[i];
      if (c == '\r') continue;
      if (c == '\n') {
        if (i + 1 < comment.size()) out_ << "\n# ";
      } else {
        out_ << c;
      }
    }
    out_ << '\n';
  }
}

void NativeWriter::on_entity(const Entity& e) {
  KANOKO_ASSERT(e.index == entity_ids_.size(), "entities must arrive in index order");
  entity_ids_.push_back(e.id);
  out_ << "node " << number(last_time_s_) << ' ' << e.id << " name=" << quote_native_string(e.name);
  if (!e.host.empty()) out_ << " host=" << quote_native_string(e.host);
  if (e.rank >= 0) out_ << " rank=" << e.rank;
  out_ << '\n';
}

void NativeWriter::on_link(const Link& l) {
  out_ << "link " << number(last_time_s_) << ' ' << l.id << ' ' << entity_ids_.at(l.a) << ' '
       << entity_ids_.at(l.b) << " name=" << quote_native_string(l.name) << '\n';
}

void NativeWriter::on_message(const Message& m) {
  last_time_s_ = m.send_s;
  out_ << "msg " << number(m.send_s) << ' ' << entity_ids_.at(m.src) << ' ' << entity_ids_.at(m.dst) << ' '
       << m.bytes;
  if (m.tag != -1) out_ << " tag=" << m.tag;  // -1 is "unknown"; other negative tags are kept
  if (m.recv_s >= 0) out_ << " recv=" << number(m.recv_s);
  out_ << '\n';
}

void NativeWriter::on_load(const LoadSample& s) {
  last_time_s_ = s.time_s;
  out_ << "load " << number(s.time_s) << ' ' << entity_ids_.at(s.entity) << ' ' << number(s.value) << '\n';
}

void NativeWriter::on_state(const StateInterval& s) {
  last_time_s_ = s.begin_s;
  out_ << "state " << number(s.begin_s) << ' ' << entity_ids_.at(s.entity) << ' ' << number(s.end_s - s.begin_s)
       << ' ' << quote_native_string(s.name) << '\n';
}

void NativeWriter::on_collective(const Collective& c) {
  last_time_s_ = c.begin_s;
  out_ << "coll " << number(c.begin_s) << ' ' << entity_ids_.at(c.entity) << ' ' << number(c.end_s - c.begin_s)
       << ' ' << quote_native_string(c.name) << ' ' << c.bytes;
  if (c.root >= 0) out_ << " root=" << entity_ids_.at(static_cast<std::size_t>(c.root));
  if (!c.group.empty()) out_ << " group=" << quote_native_string(c.group);
  out_ << '\n';
}

void NativeWriter::on_end(double end_s) { out_ << "end " << number(end_s) << '\n'; }

}  // namespace kanoko::trace
