// Expressions in mapping files: a quantity (mass, spring stiffness, communication weight, colour,
// cue threshold, ...) may be given as a formula over per-body or per-pair statistics of the
// current interval and running totals. Formulas are muparser expressions: arithmetic, comparisons,
// `?:`, and muparser's built-in functions (sin, exp, log, sqrt, min, max, sum, avg, ...). muparser
// has no I/O, no loops and no user-defined functions, so an expression can never run code or
// touch files. Each expression is compiled once when the mapping is loaded (unknown names are
// reported then, with file:line:column and a suggestion) and then evaluated as bytecode.
// Reference: docs/mapping-language.md, section "Expressions".
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "src/base/error.hpp"

namespace mu {
class Parser;
}

namespace kanoko::mapping {

/// Which variables an expression sees.
enum class Scope {
  Body,  ///< one body in one interval (mass, colour, radius scale, cue values)
  Pair,  ///< one ordered pair of bodies in one interval (communication weight, spring stiffness)
  Cue,   ///< one body's watched rate over a whole run (the bounds of a sound cue's `rate`)
};

/// Variables of Scope::Body, in this order (the index into the values array).
enum BodyVar : std::size_t {
  kBodyIndex, kBodyRank, kBodyCount, kBodyDegree, kBodyLoad, kBodyBusy, kBodyCommunicating, kBodyIdle,
  kBodyBytesSent, kBodyBytesRecv, kBodyMsgsSent, kBodyMsgsRecv,
  kBodyBytesSentTotal, kBodyBytesRecvTotal, kBodyMsgsSentTotal, kBodyMsgsRecvTotal,
  kBodyBusyTotal, kBodyCommunicatingTotal, kBodyIdleTotal,
  kBodyPeakBytes, kBodyPeakMsgs, kBodyInterval, kBodyTime,
  kBodyVarCount
};

/// Variables of Scope::Pair, in this order.
enum PairVar : std::size_t {
  kPairBytes, kPairMsgs, kPairBytesTotal, kPairMsgsTotal, kPairPeakBytes, kPairPeakMsgs,
  kPairSrcIndex, kPairDstIndex, kPairSrcLoad, kPairDstLoad, kPairSrcDegree, kPairDstDegree,
  kPairCount, kPairInterval, kPairTime,
  kPairVarCount
};

/// Variables of Scope::Cue, in this order: statistics of the rate of change of a cue's watched
/// quantity over the stored frames of a run, for the body and over all bodies.
enum CueVar : std::size_t {
  kCueIndex, kCueCount, kCueMeanRate, kCueSdRate, kCuePeakRate, kCueAllMeanRate, kCueAllSdRate, kCueAllPeakRate,
  kCueVarCount
};

/// The variable names of a scope, indexed by BodyVar, PairVar or CueVar.
const std::vector<std::string>& variable_names(Scope scope);
/// One line per variable: "name: meaning", for docs and --help.
const std::vector<std::pair<std::string, std::string>>& variable_docs(Scope scope);

/// A checked expression as written in the mapping.
struct ExpressionSpec {
  std::string key;   ///< dotted key it came from ("mass.expression")
  std::string text;  ///< the formula
  FileLoc loc;       ///< location of the formula's first character in the mapping
  Scope scope = Scope::Body;
  std::vector<std::string> used;  ///< variables it reads
  /// Variables beyond the scope's own (the mapping's [locations], Scope::Body), bound after them:
  /// values[variable_names(scope).size() + i].
  std::vector<std::string> extra;

  /// "'mass.expression' = \"1 + load\" (m.toml:12:14)"
  [[nodiscard]] std::string describe() const;
};

/// Compiles `text` for `scope`: returns the problems (empty when it is valid). `loc` is where the
/// formula's first character is; the diagnostics point at the offending token. Besides syntax and
/// unknown names, a formula that is not finite when every variable is 1 (such as `load / 0`) is
/// refused. On success fills `used`.
std::vector<Diagnostic> check_expression(const std::string& text, Scope scope, const FileLoc& loc,
                                         std::vector<std::string>* used = nullptr,
                                         const std::vector<std::string>& extra = {});

/// A compiled expression bound to an array of variable values (owned by the caller, sized
/// kBodyVarCount, kPairVarCount or kCueVarCount plus the spec's extra variables, alive as long as
/// the expression).
class Expression {
 public:
  Expression();
  Expression(const ExpressionSpec& spec, const double* values);
  Expression(Expression&&) noexcept;
  Expression& operator=(Expression&&) noexcept;
  ~Expression();

  [[nodiscard]] bool valid() const { return parser_ != nullptr; }
  [[nodiscard]] const ExpressionSpec& spec() const { return spec_; }
  /// Evaluates with the values currently in the bound array. No allocation.
  [[nodiscard]] double eval() const;
  /// Throws RunError naming the expression, its location, `subject` (a body or pair, with the
  /// interval) and the value, which broke `requirement` ("finite and > 0").
  [[noreturn]] void throw_bad_value(const std::string& subject, double value, const std::string& requirement) const;

 private:
  ExpressionSpec spec_;
  std::unique_ptr<mu::Parser> parser_;
  const double* values_ = nullptr;  ///< the bound variable values (for the reason of a bad value)
};

}  // namespace kanoko::mapping
