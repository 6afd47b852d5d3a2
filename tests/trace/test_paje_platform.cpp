// The Pajé reader's platform graph: SimGrid traces written with tracing/platform:yes hold the
// platform as Pajé links between host, router and network-link containers; the reader reduces
// them to Links between entities (docs/trace-formats.md, "Platform links"). Checked on SMPI
// traces of this repository (traces/simgrid, generate.sh) against their platform files, and on
// small synthetic graphs for each case of the reduction rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "src/trace/paje_reader.hpp"
#include "src/trace/readers.hpp"
#include "src/trace/timeline.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

using NamePair = std::pair<std::string, std::string>;

/// Keeps the entities and the links, counts the rest.
class LinkSink final : public TraceSink {
 public:
  std::vector<Entity> entities;
  std::vector<Link> links;
  std::size_t messages = 0;
  std::uint64_t message_bytes = 0;
  int links_after_end = 0;
  bool ended = false;

  void on_entity(const Entity& e) override { entities.push_back(e); }
  void on_link(const Link& l) override {
    links_after_end += ended ? 1 : 0;
    links.push_back(l);
  }
  void on_message(const Message& m) override {
    ++messages;
    message_bytes += m.bytes;
  }
  void on_load(const LoadSample&) override {}
  void on_state(const StateInterval&) override {}
  void on_end(double) override { ended = true; }

  /// The links as unordered pairs of entity names (smaller name first).
  [[nodiscard]] std::set<NamePair> name_pairs() const {
    std::set<NamePair> out;
    for (const Link& l : links) {
      const std::string& a = entities.at(l.a).name;
      const std::string& b = entities.at(l.b).name;
      out.insert(std::minmax(a, b));
    }
    return out;
  }
};

std::filesystem::path simgrid_dir() { return test::source_dir() / "traces" / "simgrid"; }

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The host pairs a platform file joins by a route of exactly one link: the physical links of
/// traces/simgrid/ring5-platform.xml (its longer routes use two of them).
std::set<NamePair> single_link_routes(const std::filesystem::path& xml) {
  const std::string text = slurp(xml);
  const std::regex route(R"re(<route src="(\w+)" dst="(\w+)">((?:<link_ctn id="\w+"/>)+)</route>)re");
  std::set<NamePair> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), route); it != std::sregex_iterator(); ++it) {
    const std::string links = (*it)[3].str();
    const auto count = static_cast<std::size_t>(std::count(links.begin(), links.end(), '<'));
    if (count == 1) out.insert(std::minmax((*it)[1].str(), (*it)[2].str()));
  }
  return out;
}

/// The edges of a torus cluster's hosts PREFIX0…: neighbours differ by ±1 (mod the size) in one
/// coordinate, as SimGrid numbers them (first dimension fastest).
std::set<NamePair> torus_edges(const std::string& prefix, const std::vector<int>& dims) {
  int n = 1;
  for (const int d : dims) n *= d;
  std::set<NamePair> out;
  for (int i = 0; i < n; ++i) {
    int stride = 1;
    for (const int d : dims) {
      const int coord = (i / stride) % d;
      const int j = i + (((coord + 1) % d) - coord) * stride;
      if (j != i) out.insert(std::minmax(prefix + std::to_string(i), prefix + std::to_string(j)));
      stride *= d;
    }
  }
  return out;
}

TEST(PajePlatform, Ring5HostsAreJoinedByThePlatformLinks) {
  const std::set<NamePair> expected = single_link_routes(simgrid_dir() / "ring5-platform.xml");
  ASSERT_EQ(expected.size(), 5U);  // the test's own parse of the platform file
  LinkSink sink;
  PajeOptions o;
  o.entity_type = "HOST";
  const PajeSummary s = read_paje_trace(simgrid_dir() / "ring5.trace", sink, o);
  EXPECT_EQ(sink.entities.size(), 5U);
  EXPECT_EQ(sink.name_pairs(), expected);
  EXPECT_EQ(sink.links.size(), expected.size());  // each pair once
  EXPECT_EQ(s.platform_links, 5U);
  EXPECT_EQ(sink.links_after_end, 0);
  for (std::size_t i = 0; i < sink.links.size(); ++i) {
    EXPECT_EQ(sink.links[i].id, static_cast<std::int64_t>(i));
    EXPECT_LT(sink.links[i].a, sink.links[i].b);
    EXPECT_EQ(sink.links[i].name, sink.entities[sink.links[i].a].name + "-" + sink.entities[sink.links[i].b].name);
  }
  // The ranks' messages do not join hosts: SMPI does not nest ranks in their hosts.
  EXPECT_EQ(sink.messages, 0U);
}

TEST(PajePlatform, RanksAreNotInThePlatformGraph) {
  // The SMPI default: ranks are the entities; they exchange the ring's five messages, and the
  // platform (hosts, links) joins none of them.
  LinkSink sink;
  const PajeSummary s = read_paje_trace(simgrid_dir() / "ring5.trace", sink);
  EXPECT_EQ(s.entity_type, "MPI");
  EXPECT_EQ(sink.entities.size(), 5U);
  EXPECT_EQ(sink.messages, 5U);
  EXPECT_TRUE(sink.links.empty());
  EXPECT_EQ(s.platform_links, 0U);
}

TEST(PajePlatform, Ring5CountsEqualPjDump) {
  if (test::run_program({"pj_dump", "--version"}).exit_code == 127) {
    GTEST_SKIP() << "pj_dump not installed (apt-get install pajeng): counts not compared";
  }
  const auto file = simgrid_dir() / "ring5.trace";
  const test::CommandResult d = test::run_program({"pj_dump", file.string()});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  // Rows of the dump that start with KIND and a comma.
  const auto rows = [&](const std::string& kind) {
    std::uint64_t n = d.out.rfind(kind + ",", 0) == 0 ? 1U : 0U;
    for (auto at = d.out.find("\n" + kind + ","); at != std::string::npos; at = d.out.find("\n" + kind + ",", at + 1)) ++n;
    return n;
  };
  LinkSink sink;
  const PajeSummary s = read_paje_trace(file, sink);
  EXPECT_EQ(s.containers, rows("Container"));
  EXPECT_EQ(s.states, rows("State"));
  EXPECT_EQ(s.links, rows("Link"));  // 15 platform edges and 5 messages
  EXPECT_EQ(s.links, 20U);
}

TEST(PajePlatform, TorusClusterGivesTheTorus) {
  // Written with display-sizes: SimGrid 3.32 then omits the declared Size on the topology links'
  // starts, which is read as size 0 with a warning (pj_dump refuses this file).
  LinkSink sink;
  PajeOptions o;
  o.entity_type = "HOST";
  const PajeSummary s = read_paje_trace(simgrid_dir() / "torus8.trace", sink, o);
  EXPECT_EQ(sink.entities.size(), 8U);
  const std::set<NamePair> expected = torus_edges("n", {2, 2, 2});
  ASSERT_EQ(expected.size(), 12U);  // the cube
  EXPECT_EQ(sink.name_pairs(), expected);
  EXPECT_EQ(sink.links.size(), 12U);
  const auto missing = std::find_if(s.warnings.begin(), s.warnings.end(),
                                    [](const PajeWarning& w) { return w.what.find("Size") != std::string::npos; });
  ASSERT_NE(missing, s.warnings.end());
  EXPECT_GT(missing->count, 0U);

  // With the ranks as entities, the ring's eight messages of one int each keep their sizes.
  LinkSink ranks;
  read_paje_trace(simgrid_dir() / "torus8.trace", ranks);
  EXPECT_EQ(ranks.messages, 8U);
  EXPECT_EQ(ranks.message_bytes, 8U * 4U);
}

TEST(PajePlatform, LinksReachTheTimeline) {
  TimelineBuilder b(TimelineOptions{});
  ReaderOptions o;
  o.paje.entity_type = "HOST";
  const ReadReport r = read_trace(simgrid_dir() / "ring5.trace", b, "auto", o);
  EXPECT_EQ(r.format, "paje");
  const Timeline tl = b.take();
  EXPECT_EQ(tl.links.size(), 5U);
}

TEST(PajePlatform, SimgridPlatformMappingGetsThePlatformSprings) {
  // The shipped mapping for SimGrid platforms (hosts as bodies, topology "links") on the torus:
  // its springs are the 12 edges of the cube.
  const test::CommandResult r = test::run_kanoko(
      {"check", (test::source_dir() / "mappings" / "simgrid-platform.toml").string(), "--trace",
       (simgrid_dir() / "torus8.trace").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("8 entities → 8 bodies"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the trace's links (12 edges"), std::string::npos) << r.out;
}

// ---- the reduction rule on small graphs ----

/// A Pajé header with the events the graphs need, ids 1-6, tab-separated.
const std::string kGraphHeader =
    "%EventDef\tPajeDefineContainerType\t1\n%\tAlias\tstring\n%\tType\tstring\n%\tName\tstring\n%EndEventDef\n"
    "%EventDef\tPajeDefineLinkType\t2\n%\tAlias\tstring\n%\tType\tstring\n%\tStartContainerType\tstring\n"
    "%\tEndContainerType\tstring\n%\tName\tstring\n%EndEventDef\n"
    "%EventDef\tPajeCreateContainer\t3\n%\tTime\tdate\n%\tAlias\tstring\n%\tType\tstring\n%\tContainer\tstring\n"
    "%\tName\tstring\n%EndEventDef\n"
    "%EventDef\tPajeStartLink\t4\n%\tTime\tdate\n%\tType\tstring\n%\tContainer\tstring\n%\tValue\tstring\n"
    "%\tStartContainer\tstring\n%\tKey\tstring\n%EndEventDef\n"
    "%EventDef\tPajeEndLink\t5\n%\tTime\tdate\n%\tType\tstring\n%\tContainer\tstring\n%\tValue\tstring\n"
    "%\tEndContainer\tstring\n%\tKey\tstring\n%EndEventDef\n"
    "1 HOST 0 HOST\n1 LINK 0 LINK\n1 ROUTER 0 ROUTER\n2 T 0 HOST LINK T\n";

/// A platform of hosts H, links L and routers R joined by the given edges (container names).
std::set<NamePair> reduce(const std::vector<std::string>& hosts, const std::vector<std::string>& others,
                          const std::vector<NamePair>& edges, std::size_t* messages = nullptr) {
  std::string text = kGraphHeader;
  for (const std::string& h : hosts) text += "3 0 " + h + " HOST 0 " + h + "\n";
  for (const std::string& o : others) text += "3 0 " + o + (o[0] == 'r' ? " ROUTER" : " LINK") + " 0 " + o + "\n";
  int key = 0;
  for (const auto& [a, b] : edges) {
    text += "4 0 T 0 topology " + a + " k" + std::to_string(key) + "\n";
    text += "5 0 T 0 topology " + b + " k" + std::to_string(key) + "\n";
    ++key;
  }
  LinkSink sink;
  PajeOptions o;
  o.entity_type = "HOST";
  read_paje_trace_text(text, "graph.paje", sink, o);
  if (messages != nullptr) *messages = sink.messages;
  return sink.name_pairs();
}

TEST(PajePlatform, ReductionRule) {
  // A link shared by two hosts joins them; one shared by three joins all three.
  EXPECT_EQ(reduce({"a", "b"}, {"l"}, {{"a", "l"}, {"l", "b"}}), (std::set<NamePair>{{"a", "b"}}));
  EXPECT_EQ(reduce({"a", "b", "c"}, {"l"}, {{"a", "l"}, {"b", "l"}, {"l", "c"}}),
            (std::set<NamePair>{{"a", "b"}, {"a", "c"}, {"b", "c"}}));
  // Private links to a router (a cluster's crossbar): every pair.
  EXPECT_EQ(reduce({"a", "b", "c"}, {"la", "lb", "lc", "r"},
                   {{"a", "la"}, {"la", "r"}, {"b", "lb"}, {"lb", "r"}, {"c", "lc"}, {"lc", "r"}}),
            (std::set<NamePair>{{"a", "b"}, {"a", "c"}, {"b", "c"}}));
  // At most one router per path: two clusters behind routers r1 and r2 joined by a backbone
  // link are not joined to each other.
  EXPECT_EQ(reduce({"a", "b", "c", "d"}, {"la", "lb", "lc", "ld", "r1", "r2", "bb"},
                   {{"a", "la"}, {"la", "r1"}, {"b", "lb"}, {"lb", "r1"}, {"c", "lc"}, {"lc", "r2"}, {"d", "ld"},
                    {"ld", "r2"}, {"r1", "bb"}, {"bb", "r2"}}),
            (std::set<NamePair>{{"a", "b"}, {"c", "d"}}));
  // A route through two links that each touch a host of their own goes through that host: a
  // chain a–lab–b–lbc–c with SimGrid's extra lab–lbc edge (the route a→c) joins a-b and b-c only.
  EXPECT_EQ(reduce({"a", "b", "c"}, {"lab", "lbc"}, {{"a", "lab"}, {"lab", "b"}, {"b", "lbc"}, {"lbc", "c"}, {"lab", "lbc"}}),
            (std::set<NamePair>{{"a", "b"}, {"b", "c"}}));
  // Links that touch no other host are passed through: a–l1–l2–l3–b.
  EXPECT_EQ(reduce({"a", "b"}, {"l1", "l2", "l3"}, {{"a", "l1"}, {"l1", "l2"}, {"l2", "l3"}, {"l3", "b"}}),
            (std::set<NamePair>{{"a", "b"}}));
  // A host whose links lead nowhere, and a graph of links only, give no link.
  EXPECT_TRUE(reduce({"a", "b"}, {"l"}, {{"a", "l"}}).empty());
  EXPECT_TRUE(reduce({"a"}, {"l1", "l2"}, {{"l1", "l2"}}).empty());
  // A Pajé link between two hosts is a message, not a platform edge.
  std::size_t messages = 0;
  EXPECT_TRUE(reduce({"a", "b"}, {}, {{"a", "b"}}, &messages).empty());
  EXPECT_EQ(messages, 1U);
}

TEST(PajePlatform, LateVariableChangesAreAppliedNow) {
  // SimGrid's resource tracing dates some variable changes before lines already written (ring5
  // has them): applied at the current time with a warning; a late state is still an error.
  LinkSink sink;
  const PajeSummary s = read_paje_trace(simgrid_dir() / "ring5.trace", sink);
  const auto late = std::find_if(s.warnings.begin(), s.warnings.end(),
                                 [](const PajeWarning& w) { return w.what.find("variable change dated") != std::string::npos; });
  ASSERT_NE(late, s.warnings.end());
  EXPECT_GT(late->count, 0U);
  EXPECT_GT(late->first.line, 200);

  const std::string head = kGraphHeader.substr(0, kGraphHeader.find("1 HOST 0 HOST")) +
                           "%EventDef PajeDefineVariableType 6\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n"
                           "%EventDef PajeSetVariable 7\n% Time date\n% Type string\n% Container string\n% Value double\n%EndEventDef\n"
                           "1 HOST 0 HOST\n6 V HOST V\n3 0 a HOST 0 a\n";
  PajeOptions o;
  o.load_variable = "V";
  LinkSink ok;
  const PajeSummary r = read_paje_trace_text(head + "7 2 V a 1\n7 1 V a 3\n7 4 V a 5\n", "late.paje", ok, o);
  EXPECT_EQ(r.warning_count(), 1U);
  EXPECT_EQ(r.variable_events, 3U);
  EXPECT_THROW(read_paje_trace_text(head + "7 2 V a 1\n4 1 T 0 v a k\n", "late.paje", ok, o), InputError);
}

TEST(PajePlatform, AnAliasNamesAContainerBeforeAName) {
  // SimGrid's MSG traces (ms.trace) call host Fafard "3" by alias and a network link "3" by name;
  // the topology links name the host.
  const std::string text = kGraphHeader + "3 0 1 HOST 0 Tremblay\n3 0 3 HOST 0 Fafard\n3 0 7 LINK 0 3\n"
                                          "3 0 8 LINK 0 8\n4 0 T 0 G 1 k1\n5 0 T 0 G 8 k1\n4 0 T 0 G 3 k2\n5 0 T 0 G 8 k2\n";
  LinkSink sink;
  PajeOptions o;
  o.entity_type = "HOST";
  const PajeSummary s = read_paje_trace_text(text, "alias.paje", sink, o);
  EXPECT_EQ(sink.name_pairs(), (std::set<NamePair>{{"Fafard", "Tremblay"}}));
  EXPECT_TRUE(s.warnings.empty());
  const auto ms = test::shared_dir() / "traces" / "paje" / "ms.trace";
  if (!std::filesystem::exists(ms)) GTEST_SKIP() << "shared trace missing: " << ms;
  LinkSink hosts;
  read_paje_trace(ms, hosts, o);
  EXPECT_EQ(hosts.entities.size(), 5U);
  EXPECT_FALSE(hosts.links.empty());
}

TEST(PajePlatform, EntitiesKnowTheContainersAboveTheirHost) {
  // Ranks in hosts in SimGrid's nested zones (types L1, L2), the root left out.
  const std::string text = kGraphHeader +
                           "1 Z1 0 L1\n1 Z2 Z1 L2\n1 H Z2 HOST\n1 R H MPI\n"
                           "3 0 room-a Z1 0 room-a\n3 0 ca Z2 room-a ca\n3 0 cb Z2 room-a cb\n"
                           "3 0 ca-0 H ca ca-0\n3 0 cb-0 H cb cb-0\n"
                           "3 0 rank-0 R ca-0 rank-0\n3 0 rank-1 R cb-0 rank-1\n3 0 rank-2 R 0 rank-2\n";
  LinkSink sink;
  read_paje_trace_text(text, "zones.paje", sink, PajeOptions{});
  ASSERT_EQ(sink.entities.size(), 3U);
  EXPECT_EQ(sink.entities[0].host, "ca-0");
  EXPECT_EQ(sink.entities[0].above_host, (std::vector<Enclosing>{{"L2", "ca"}, {"L1", "room-a"}}));
  EXPECT_EQ(sink.entities[1].above_host, (std::vector<Enclosing>{{"L2", "cb"}, {"L1", "room-a"}}));
  EXPECT_EQ(sink.entities[2].host, "");  // a rank on the root, as SMPI writes them
  EXPECT_TRUE(sink.entities[2].above_host.empty());
}

TEST(PajePlatform, Grid5000HostsInTheirZones) {
  // A real SimGrid platform trace (pajeng's g5k.trace): sites (L1), clusters (L2) and some
  // clusters' sub-clusters (L3) above the hosts, which are the entities.
  const auto g5k = test::shared_dir() / "traces" / "paje" / "g5k.trace";
  if (!std::filesystem::exists(g5k)) GTEST_SKIP() << "shared trace missing: " << g5k;
  LinkSink sink;
  read_paje_trace(g5k, sink);
  const auto named = [&](const std::string& name) {
    const auto it = std::find_if(sink.entities.begin(), sink.entities.end(), [&](const Entity& e) { return e.name == name; });
    EXPECT_NE(it, sink.entities.end()) << name;
    return it == sink.entities.end() ? Entity{} : *it;
  };
  EXPECT_EQ(named("graphene-1.nancy.grid5000.fr").above_host,
            (std::vector<Enclosing>{{"L3", "AS_sgraphene1"}, {"L2", "AS_graphene"}, {"L1", "AS_nancy"}}));
  EXPECT_EQ(named("bordeplage-1.bordeaux.grid5000.fr").above_host,
            (std::vector<Enclosing>{{"L2", "AS_bordeplage"}, {"L1", "AS_bordeaux"}}));
  for (const Entity& e : sink.entities) EXPECT_FALSE(e.above_host.empty()) << e.name;
}

TEST(PajePlatform, DeterministicOrder) {
  LinkSink a;
  LinkSink b;
  PajeOptions o;
  o.entity_type = "HOST";
  read_paje_trace(simgrid_dir() / "torus8.trace", a, o);
  read_paje_trace(simgrid_dir() / "torus8.trace", b, o);
  ASSERT_EQ(a.links.size(), b.links.size());
  for (std::size_t i = 0; i < a.links.size(); ++i) {
    EXPECT_EQ(a.links[i].a, b.links[i].a);
    EXPECT_EQ(a.links[i].b, b.links[i].b);
    if (i > 0) {
      EXPECT_LT(std::make_pair(a.links[i - 1].a, a.links[i - 1].b), std::make_pair(a.links[i].a, a.links[i].b));
    }
  }
}

TEST(PajePlatform, MissingSizeOnlyForTheLastSizeField) {
  // A PajeStartLink without its declared trailing Size is read (SimGrid's quirk); a line that
  // lacks another field is still an error at its position.
  const std::string head = kGraphHeader.substr(0, kGraphHeader.find("%EventDef\tPajeEndLink"));
  const std::string sized = std::string(head).replace(head.find("%\tKey\tstring\n%EndEventDef"), 12,
                                                      "%\tKey\tstring\n%\tSize\tint");
  LinkSink sink;
  const std::string ok = sized + "1 HOST 0 HOST\n3 0 a HOST 0 a\n4 0 HOST 0 v a k1\n4 0 HOST 0 v a k2 12\n";
  const PajeSummary s = read_paje_trace_text(ok, "size.paje", sink);
  EXPECT_EQ(s.warning_count(), 3U);  // the missing Size, and two starts without an end
  try {
    read_paje_trace_text(sized + "1 HOST 0 HOST\n3 0 a HOST 0 a\n4 0 HOST 0 v a\n", "size.paje", sink);
    ADD_FAILURE() << "a start without Key and Size was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(e.diagnostics().at(0).message.find("missing field"), std::string::npos) << e.what();
    EXPECT_EQ(e.diagnostics().at(0).loc.line, 31);
  }
}

}  // namespace
}  // namespace kanoko::trace
