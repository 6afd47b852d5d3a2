#include "src/mapping/expression.hpp"

#include <muParser.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "src/base/suggest.hpp"

namespace kanoko::mapping {

namespace {

using Docs = std::vector<std::pair<std::string, std::string>>;

const Docs& body_docs() {
  static const Docs docs = {
      {"index", "body index, 0 to count − 1 (the trace's order)"},
      {"rank", "MPI rank of the body's (first) entity, or its index when the trace gives none"},
      {"count", "number of bodies"},
      {"degree", "number of springs at the body"},
      {"load", "load of the interval, as [mass] `load` defines it"},
      {"busy", "fraction of the interval spent in computing states"},
      {"communicating", "fraction of the interval spent in communicating states"},
      {"idle", "fraction of the interval spent in idle states (time in no state is not idle)"},
      {"bytes_sent", "bytes the body sent in the interval"},
      {"bytes_recv", "bytes the body received in the interval"},
      {"msgs_sent", "messages the body sent in the interval"},
      {"msgs_recv", "messages the body received in the interval"},
      {"bytes_sent_total", "bytes sent from the start of the trace through this interval"},
      {"bytes_recv_total", "bytes received through this interval"},
      {"msgs_sent_total", "messages sent through this interval"},
      {"msgs_recv_total", "messages received through this interval"},
      {"busy_total", "seconds in computing states from the start of the trace through this interval"},
      {"communicating_total", "seconds in communicating states through this interval"},
      {"idle_total", "seconds in idle states through this interval"},
      {"peak_bytes", "largest bytes of one pair in one interval, over the whole trace"},
      {"peak_msgs", "largest message count of one pair in one interval, over the whole trace"},
      {"interval", "interval width in seconds"},
      {"time", "start of the interval, in trace seconds"},
  };
  return docs;
}

const Docs& pair_docs() {
  static const Docs docs = {
      {"bytes", "bytes from src to dst in the interval (springs: both directions)"},
      {"msgs", "messages from src to dst in the interval (springs: both directions)"},
      {"bytes_total", "bytes between the pair from the start through this interval"},
      {"msgs_total", "messages between the pair through this interval"},
      {"peak_bytes", "largest bytes of one pair in one interval, over the whole trace"},
      {"peak_msgs", "largest message count of one pair in one interval, over the whole trace"},
      {"src_index", "index of the sender (springs: the first end)"},
      {"dst_index", "index of the receiver (springs: the second end)"},
      {"src_load", "load of the sender in the interval"},
      {"dst_load", "load of the receiver in the interval"},
      {"src_degree", "springs at the sender"},
      {"dst_degree", "springs at the receiver"},
      {"count", "number of bodies"},
      {"interval", "interval width in seconds"},
      {"time", "start of the interval, in trace seconds"},
  };
  return docs;
}

const Docs& cue_docs() {
  static const Docs docs = {
      {"index", "body index, 0 to count − 1"},
      {"count", "number of bodies"},
      {"mean_rate", "mean of the body's rate of change of the watched quantity over the run's frames"},
      {"sd_rate", "standard deviation of that rate"},
      {"peak_rate", "largest absolute value of that rate"},
      {"all_mean_rate", "mean of the rate over every body and frame"},
      {"all_sd_rate", "standard deviation of the rate over every body and frame"},
      {"all_peak_rate", "largest absolute rate of any body"},
  };
  return docs;
}

std::vector<std::string> names_of(const Docs& docs) {
  std::vector<std::string> out;
  for (const auto& d : docs) out.push_back(d.first);
  return out;
}

constexpr std::size_t kMaxLength = 4096;

/// A parser with the scope's variables bound to `values` and no other names.
void define_variables(mu::Parser& p, Scope scope, const double* values, const std::vector<std::string>& extra) {
  const auto& names = variable_names(scope);
  for (std::size_t i = 0; i < names.size() + extra.size(); ++i) {
    // muparser binds a non-const pointer but only reads through it when evaluating.
    p.DefineVar(i < names.size() ? names[i] : extra[i - names.size()],
                const_cast<double*>(values + i));  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  }
}

/// The names an expression of `scope` may read.
std::vector<std::string> all_names(Scope scope, const std::vector<std::string>& extra) {
  std::vector<std::string> names = variable_names(scope);
  names.insert(names.end(), extra.begin(), extra.end());
  return names;
}

std::string muparser_message(const mu::ParserError& e) {
  std::string msg = e.GetMsg();
  // muparser appends " at position N." (0-based); the location already says where.
  const std::size_t at = msg.rfind(" at position ");
  if (at != std::string::npos) msg.erase(at);
  if (!msg.empty() && msg.back() == '.') msg.pop_back();
  return msg;
}

}  // namespace

const std::vector<std::string>& variable_names(Scope scope) {
  static const std::vector<std::string> body = names_of(body_docs());
  static const std::vector<std::string> pair = names_of(pair_docs());
  static const std::vector<std::string> cue = names_of(cue_docs());
  switch (scope) {
    case Scope::Body: return body;
    case Scope::Pair: return pair;
    case Scope::Cue: return cue;
  }
  return body;
}

const std::vector<std::pair<std::string, std::string>>& variable_docs(Scope scope) {
  switch (scope) {
    case Scope::Body: return body_docs();
    case Scope::Pair: return pair_docs();
    case Scope::Cue: return cue_docs();
  }
  return body_docs();
}

std::string ExpressionSpec::describe() const { return "'" + key + "' = \"" + text + "\" (" + loc.str() + ")"; }

std::vector<Diagnostic> check_expression(const std::string& text, Scope scope, const FileLoc& loc,
                                         std::vector<std::string>* used, const std::vector<std::string>& extra) {
  auto at = [&](int pos) {
    FileLoc l = loc;
    if (l.column > 0 && pos > 0) l.column += pos;
    return l;
  };
  if (text.size() > kMaxLength) {
    return {{loc, "expression is " + std::to_string(text.size()) + " characters long; at most " +
                      std::to_string(kMaxLength) + " are allowed"}};
  }
  if (text.find_first_not_of(" \t") == std::string::npos) return {{loc, "empty expression"}};
  // muparser can assign to variables ("load = 1", "x += 2"); a mapping only reads them.
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '=') continue;
    const char before = i > 0 ? text[i - 1] : ' ';
    const char after = i + 1 < text.size() ? text[i + 1] : ' ';
    if (after == '=') {
      ++i;  // "=="
      continue;
    }
    if (before == '<' || before == '>' || before == '!') continue;
    return {{at(static_cast<int>(i) - ((before == '+' || before == '-' || before == '*' || before == '/') ? 1 : 0)),
             "assignment ('=') is not allowed in an expression; compare with '=='"}};
  }
  const std::vector<std::string> names = all_names(scope, extra);
  std::vector<double> values(names.size(), 1.0);
  try {
    mu::Parser p;
    define_variables(p, scope, values.data(), extra);
    p.SetExpr(text);
    const double v = p.Eval();
    if (used != nullptr) {
      used->clear();
      for (const auto& [name, ptr] : p.GetUsedVar()) used->push_back(name);
    }
    if (!std::isfinite(v)) {
      std::ostringstream os;
      os << "expression \"" << text << "\" is " << v
         << " even when every variable is 1 (a division by zero or a function outside its domain)";
      return {{loc, os.str()}};
    }
  } catch (const mu::ParserError& e) {
    const std::string token = e.GetToken();
    const auto code = e.GetCode();
    const bool unknown_name = code == mu::ecUNASSIGNABLE_TOKEN && !token.empty() &&
                              (std::isalpha(static_cast<unsigned char>(token[0])) != 0 || token[0] == '_');
    if (unknown_name) {
      std::string valid;
      for (const auto& n : names) valid += (valid.empty() ? "" : ", ") + n;
      return {{at(e.GetPos()), "unknown name '" + token + "' in expression" + did_you_mean(token, names) +
                                   "; variables here: " + valid}};
    }
    return {{at(e.GetPos()), "invalid expression \"" + text + "\": " + muparser_message(e)}};
  }
  return {};
}

Expression::Expression() = default;
Expression::Expression(Expression&&) noexcept = default;
Expression& Expression::operator=(Expression&&) noexcept = default;
Expression::~Expression() = default;

Expression::Expression(const ExpressionSpec& spec, const double* values)
    : spec_(spec), parser_(std::make_unique<mu::Parser>()), values_(values) {
  try {
    define_variables(*parser_, spec.scope, values, spec.extra);
    parser_->SetExpr(spec.text);
    (void)parser_->Eval();  // compiles to bytecode now, not in the first interval
  } catch (const mu::ParserError& e) {
    // check_expression accepted it when the mapping was loaded; this is not reachable with a
    // parsed mapping, but an ExpressionSpec built by hand gets a clear error.
    throw InputError(spec.loc, "invalid expression \"" + spec.text + "\": " + muparser_message(e));
  }
}

double Expression::eval() const { return parser_->Eval(); }

void Expression::throw_bad_value(const std::string& subject, double value, const std::string& requirement) const {
  std::ostringstream os;
  os << spec_.loc.str() << ": expression '" << spec_.key << "' = \"" << spec_.text << "\" gives " << value << " for "
     << subject << "; it must be " << requirement;
  if (std::isinf(value) || std::isnan(value)) {
    // The usual cause: a variable it divides by is 0 here. Name those.
    std::string zeros;
    bool bytes = false;
    const std::vector<std::string> names = all_names(spec_.scope, spec_.extra);
    for (const std::string& name : spec_.used) {
      const auto at = std::find(names.begin(), names.end(), name);
      if (values_ == nullptr || at == names.end() || values_[at - names.begin()] != 0.0) continue;
      zeros += (zeros.empty() ? "" : ", ") + name + " = 0";
      bytes = bytes || name.find("bytes") != std::string::npos;
    }
    if (zeros.empty()) {
      os << " (a division by zero or a function outside its domain?)";
    } else {
      os << " (" << zeros << " here";
      if (bytes) os << "; the trace may record no message sizes: SimGrid writes them only with tracing/smpi/display-sizes";
      os << ")";
    }
  }
  throw RunError(os.str());
}

}  // namespace kanoko::mapping
