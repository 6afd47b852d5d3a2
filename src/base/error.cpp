#include "src/base/error.hpp"

#include <cstdio>
#include <cstdlib>

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
  return s;
}

std::string Diagnostic::str() const { return loc.str() + ": error: " + message; }

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

void DiagnosticList::add(FileLoc loc, std::string message) {
  items_.push_back(Diagnostic{std::move(loc), std::move(message)});
}

void DiagnosticList::throw_if_any() const {
  if (!items_.empty()) throw InputError(items_);
}

}  // namespace kanoko
