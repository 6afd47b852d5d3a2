#include "src/base/error.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "src/base/check.hpp"

namespace kanoko {

void assertion_failed(const char* expr, const char* file, int line, const char* msg) {
  std::fprintf(stderr, "kanoko: internal error: %s (%s) at %s:%d\n", msg, expr, file, line);
  std::abort();
}

std::string FileLoc::str() const {
  std::string s = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    s += ':' + std::to_string(line);
    if (column > 0) s += ':' + std::to_string(column);
  }
  if (!record.empty() || byte >= 0) {
    s += " (" + record;
    if (byte >= 0) s += (record.empty() ? "byte " : ", byte ") + std::to_string(byte);
    s += ')';
  }
  return s;
}

namespace {

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

/// The longest prefix of `s` of at most `n` bytes that does not cut a UTF-8 character.
std::size_t utf8_prefix(std::string_view s, std::size_t n) {
  if (n >= s.size()) return s.size();
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0U) == 0x80U) --n;
  return n;
}

/// `s` with control characters escaped as \xNN.
std::string escape_controls(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (is_control(c)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += ch;
    }
  }
  return out;
}

std::string more_bytes(std::size_t n) { return "...(" + std::to_string(n) + " more bytes)"; }

}  // namespace

std::string escaped_excerpt(std::string_view text, std::size_t max_bytes) {
  const std::size_t keep = utf8_prefix(text, max_bytes);
  std::string out = escape_controls(text.substr(0, keep));
  if (keep < text.size()) out += more_bytes(text.size() - keep);
  return out;
}

std::string message_line(std::string_view text) {
  std::string line = escape_controls(text);
  if (line.size() > kMaxMessageLine) {
    // Room for the "...(N more bytes)" tail within the cap.
    const std::size_t keep = utf8_prefix(line, kMaxMessageLine - 40);
    const std::size_t cut = line.size() - keep;
    line.resize(keep);
    line += more_bytes(cut);
  }
  return line;
}

std::string Diagnostic::str() const { return message_line(loc.str() + ": error: " + message); }

namespace {
std::string join(const std::vector<Diagnostic>& ds) {
  std::string s;
  for (const auto& d : ds) {
    if (!s.empty()) s += '\n';
    s += d.str();
  }
  return s;
}
}  // namespace

InputError::InputError(Diagnostic d) : InputError(std::vector<Diagnostic>{std::move(d)}) {}
InputError::InputError(std::vector<Diagnostic> ds)
    : std::runtime_error(join(ds)), diagnostics_(std::move(ds)) {}
InputError::InputError(FileLoc loc, const std::string& message)
    : InputError(Diagnostic{std::move(loc), message}) {}

namespace {
const CurrentInput* g_current_input = nullptr;
/// The innermost scope the last exception left ("" once a new scope opens).
std::string g_left_by_exception;
}  // namespace

CurrentInput::CurrentInput(std::string activity, std::string input)
    : activity_(std::move(activity)),
      input_(std::move(input)),
      outer_(g_current_input),
      uncaught_(std::uncaught_exceptions()) {
  g_current_input = this;
  g_left_by_exception.clear();
}

CurrentInput::~CurrentInput() {
  g_current_input = outer_;
  if (std::uncaught_exceptions() > uncaught_ && g_left_by_exception.empty()) {
    try {
      g_left_by_exception = "while " + activity_ + " " + input_;
    } catch (...) {  // out of memory while unwinding from out of memory: the context is lost, not the error
    }
  }
}

std::string CurrentInput::describe() {
  if (g_current_input == nullptr) return g_left_by_exception;
  return "while " + g_current_input->activity_ + " " + g_current_input->input_;
}

void DiagnosticList::add(FileLoc loc, std::string message) {
  items_.push_back(Diagnostic{std::move(loc), std::move(message)});
}

void DiagnosticList::throw_if_any() const {
  if (!items_.empty()) throw InputError(items_);
}

}  // namespace kanoko
