#include "src/capture/resolve.hpp"

#include <cxxabi.h>
#include <elfutils/libdwfl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace kanoko::capture {
namespace {

const Dwfl_Callbacks kCallbacks = {
    dwfl_build_id_find_elf,         // not used: each object is reported from its file
    dwfl_standard_find_debuginfo,   // separate debug files (/usr/lib/debug) too
    dwfl_offline_section_address,
    nullptr,
};

/// `name` without its symbol version ("__libc_start_main@@GLIBC_2.34"), demangled when it is a
/// C++ symbol.
std::string demangled(const char* name) {
  if (name == nullptr) return {};
  const std::string plain(name, std::strcspn(name, "@"));
  if (plain.rfind("_Z", 0) != 0) return plain;
  int status = 0;
  char* d = abi::__cxa_demangle(plain.c_str(), nullptr, nullptr, &status);
  std::string out = status == 0 && d != nullptr ? d : plain;
  std::free(d);
  return out;
}

std::string hex(std::uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

}  // namespace

/// One object file as libdwfl sees it, reported at the first bias a rank gave for it.
struct AddressResolver::Object {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;
  std::uint64_t bias = 0;
  std::string problem;  ///< why the object cannot be read ("" when it can)
  ~Object() {
    if (dwfl != nullptr) dwfl_end(dwfl);
  }
};

AddressResolver::AddressResolver() = default;
AddressResolver::~AddressResolver() = default;

AddressResolver::Object& AddressResolver::object(const std::string& path, std::uint64_t bias) {
  auto& slot = objects_[path];
  if (slot) return *slot;
  slot = std::make_unique<Object>();
  Object& o = *slot;
  o.bias = bias;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    o.problem = "the object file " + path + " no longer exists";
    return o;
  }
  o.dwfl = dwfl_begin(&kCallbacks);
  if (o.dwfl == nullptr) {
    o.problem = std::string("libdwfl: ") + dwfl_errmsg(-1);
    return o;
  }
  dwfl_report_begin(o.dwfl);
  // add_p_vaddr: `bias` is the load bias (dlpi_addr), added to the segments' own addresses.
  o.module = dwfl_report_elf(o.dwfl, path.c_str(), path.c_str(), -1, bias, true);
  dwfl_report_end(o.dwfl, nullptr, nullptr);
  if (o.module == nullptr) o.problem = "cannot read " + path + ": " + dwfl_errmsg(-1);
  return o;
}

Frame AddressResolver::resolve(const std::string& path, std::uint64_t bias, std::uint64_t ra, Resolution& how,
                               std::string& problem) {
  const auto key = std::make_pair(path, ra - bias);
  if (const auto it = cache_.find(key); it != cache_.end()) {
    how = it->second.second;
    if (how == Resolution::None) problem = object(path, bias).problem;
    return it->second.first;
  }
  Object& o = object(path, bias);
  Frame f;
  how = Resolution::None;
  if (o.module != nullptr && ra > bias) {
    // The address as this object was reported (at the first rank's bias), and the call itself:
    // the byte before the return address, which lies in the call instruction.
    const std::uint64_t at = ra - bias + o.bias;
    const std::uint64_t pc = at - 1;
    GElf_Off offset = 0;
    GElf_Sym sym{};
    const char* name = dwfl_module_addrinfo(o.module, pc, &offset, &sym, nullptr, nullptr, nullptr);
    if (Dwfl_Line* line = dwfl_module_getsrc(o.module, pc)) {
      int lineno = 0;
      const char* file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr);
      if (file != nullptr && lineno > 0) {
        f.file = file;
        f.line = lineno;
        f.function = demangled(name);
        how = Resolution::Line;
      }
    }
    if (how == Resolution::None && name != nullptr) {
      f.function = demangled(name) + "+" + hex(offset + 1);  // the offset of the return address
      how = Resolution::Symbol;
    }
    if (how == Resolution::None) {
      Dwarf_Addr start = 0;
      dwfl_module_info(o.module, nullptr, &start, nullptr, nullptr, nullptr, nullptr, nullptr);
      f.function = std::filesystem::path(path).filename().string() + "+" + hex(at - start);
      how = Resolution::Object;
    }
  } else if (o.module != nullptr) {
    problem = "address " + hex(ra) + " lies below the load bias of " + path;
  }
  if (how == Resolution::None && problem.empty()) problem = o.problem;
  cache_.emplace(key, std::make_pair(f, how));
  return f;
}

}  // namespace kanoko::capture
