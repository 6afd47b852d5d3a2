// The checker of issue 17's rule "every error located": an InputError's diagnostics each name the
// file and a line (text formats) or a record / byte offset (binary formats), or are one of a short
// documented list of whole-file problems that say what was expected; every message is one line
// within kMaxMessageLine. Used by the mutation tests of every reader and of the mapping parser.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "tests/trace/mutation.hpp"

namespace kanoko::test {

/// How an input names places: by line (text) or by record and byte offset (binary).
enum class InputKind { text, binary };

/// What is wrong with the located-ness and shape of `e`, or "" when every diagnostic passes.
/// `whole_file` lists fragments of the messages of whole-file problems, which may name the file
/// alone but must then say where the missing thing was expected (contain "expected").
inline std::string location_problem(const InputError& e, InputKind kind, const std::vector<std::string>& whole_file) {
  if (e.diagnostics().empty()) return "no diagnostic";
  std::string what;
  for (const Diagnostic& d : e.diagnostics()) {
    const std::string line = d.str();
    if (!what.empty()) what += '\n';
    what += line;
    for (const char c : line) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7f) return "control character in the message: " + line;
    }
    if (line.size() > kMaxMessageLine) return "message longer than " + std::to_string(kMaxMessageLine) + " bytes";
    if (d.loc.file.empty()) return "no file named: " + line;
    const bool located = kind == InputKind::text ? d.loc.line > 0 : d.loc.located();
    if (located) continue;
    bool listed = false;
    for (const std::string& fragment : whole_file) listed = listed || d.message.find(fragment) != std::string::npos;
    if (!listed) return "not located: " + line;
    if (d.message.find("expected") == std::string::npos) return "whole-file problem does not say what was expected: " + line;
  }
  if (what != e.what()) return "what() is not the diagnostics, one per line";
  return "";
}

/// Mutates every seed `rounds` times (1-3 edits each, deterministic) and runs `read` on each
/// mutant; returns the distinct location problems (problem → one example seed name and round), so
/// a failure shows each kind once. Exceptions other than InputError are problems too.
inline std::map<std::string, std::string> mutation_location_problems(
    const std::vector<std::pair<std::string, std::string>>& seeds, int rounds, const std::vector<std::string>& tokens,
    InputKind kind, const std::vector<std::string>& whole_file, const std::function<void(const std::string&)>& read,
    int* errors_seen = nullptr) {
  std::map<std::string, std::string> problems;
  std::mt19937_64 rng(17);
  for (const auto& [name, text] : seeds) {
    for (int round = 0; round < rounds; ++round) {
      std::string s = text;
      const int edits = 1 + round % 3;
      for (int k = 0; k < edits; ++k) trace::testing::mutate_once(s, rng, tokens);
      try {
        read(s);
      } catch (const InputError& e) {
        if (errors_seen != nullptr) ++*errors_seen;
        const std::string p = location_problem(e, kind, whole_file);
        if (!p.empty()) problems.emplace(p, name + " round " + std::to_string(round));
      } catch (const std::exception& e) {
        problems.emplace(std::string("not an InputError: ") + e.what(), name + " round " + std::to_string(round));
      }
    }
  }
  return problems;
}

}  // namespace kanoko::test
