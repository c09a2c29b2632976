// Scenario files (TOML, via toml++). Every value is read through one typed
// getter so that a wrong type or a bad unit names the file, line and column
// and the type that was expected; unknown keys are errors too (a typo must
// not silently run a different experiment).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <sstream>
#include <set>

#include <fmt/format.h>
// Parse errors as values, not exceptions (this is the only file using toml++).
#define TOML_EXCEPTIONS 0
// toml++ 3.3.0 states its parser's invariants with TOML_ASSERT_ASSUME: an
// assert() in debug builds, an optimiser assumption (__builtin_assume) in
// clang release builds. fuzz_scenario found malformed files that falsify
// two of them ("}" as an array element; a header line ending at "["),
// where the parser otherwise goes on to report a parse error. A user's file
// must get that error, not an abort or an assumption it can break, so both
// macros are off for this file (ASan still checks the parser's memory).
#include <toml++/impl/preprocessor.h>
#undef TOML_ASSERT
#define TOML_ASSERT(expr) static_cast<void>(0)
#undef TOML_ASSERT_ASSUME
#define TOML_ASSERT_ASSUME(expr) static_cast<void>(0)
#include <toml++/toml.h>

#include "sim/scenario.h"
#include "sim/units.h"
#include "weir/config.h"

namespace weir::sim {
namespace {

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}
  std::vector<std::string> errors;

  std::string where(const toml::node& n) const {
    const auto& src = n.source();
    if (src.begin.line == 0) return fmt::format("{} (--set)", path_);
    return fmt::format("{}:{}:{}", path_, src.begin.line, src.begin.column);
  }
  void error(const toml::node& n, const std::string& key, const std::string& msg) {
    errors.push_back(fmt::format("{}: {}: {}", where(n), key, msg));
  }
  static std::string type_name(const toml::node& n) {
    switch (n.type()) {
      case toml::node_type::string: return "a string";
      case toml::node_type::integer: return "an integer";
      case toml::node_type::floating_point: return "a float";
      case toml::node_type::boolean: return "a boolean";
      case toml::node_type::table: return "a table";
      case toml::node_type::array: return "an array";
      default: return "a date/time";
    }
  }
  void check_keys(const toml::table& t, const std::string& prefix, const std::set<std::string>& known) {
    for (auto&& [k, v] : t) {
      if (!known.count(std::string(k.str())))
        error(v, prefix + std::string(k.str()), "unknown key");
    }
  }

  // Text of a scalar given either as a string or as a number.
  template <typename F>
  bool quantity(const toml::table& t, const std::string& prefix, const char* key, const char* expected, F parse) {
    const toml::node* n = t.get(key);
    if (!n) return false;
    std::string text;
    if (auto s = n->value<std::string>()) text = *s;
    else if (n->is_integer()) text = std::to_string(*n->value<int64_t>());
    else if (n->is_floating_point()) text = fmt::format("{}", *n->value<double>());
    else {
      error(*n, prefix + key, fmt::format("expected {}, got {}", expected, type_name(*n)));
      return false;
    }
    std::string err = parse(text);
    if (!err.empty()) {
      error(*n, prefix + key, fmt::format("expected {}: {}", expected, err));
      return false;
    }
    return true;
  }
  void duration(const toml::table& t, const std::string& pf, const char* key, Duration& out) {
    quantity(t, pf, key, "a duration (\"150ms\", \"1.5s\", or seconds)", [&](const std::string& s) {
      auto v = parse_duration(s);
      if (v) out = *v;
      return v ? std::string() : v.error();
    });
  }
  void rate(const toml::table& t, const std::string& pf, const char* key, uint64_t& out) {
    quantity(t, pf, key, "a rate (\"50Mbit\", \"2MB/s\", or bits/s)", [&](const std::string& s) {
      auto v = parse_rate(s);
      if (v) out = static_cast<uint64_t>(*v);
      return v ? std::string() : v.error();
    });
  }
  void rate(const toml::table& t, const std::string& pf, const char* key, double& out) {
    uint64_t v = 0;
    if (t.get(key)) {
      rate(t, pf, key, v);
      out = static_cast<double>(v);
    }
  }
  template <typename T>
  void size(const toml::table& t, const std::string& pf, const char* key, T& out) {
    quantity(t, pf, key, "a size (\"256KB\", \"64KiB\", or bytes)", [&](const std::string& s) {
      auto v = parse_size(s);
      if (v) out = static_cast<T>(*v);
      return v ? std::string() : v.error();
    });
  }
  void fraction(const toml::table& t, const std::string& pf, const char* key, double& out) {
    quantity(t, pf, key, "a fraction (\"3%\" or 0.03)", [&](const std::string& s) {
      auto v = parse_fraction(s);
      if (v) out = *v;
      return v ? std::string() : v.error();
    });
  }
  template <typename T>
  void integer(const toml::table& t, const std::string& pf, const char* key, T& out) {
    const toml::node* n = t.get(key);
    if (!n) return;
    if (!n->is_integer() || *n->value<int64_t>() < 0)
      return error(*n, pf + key, fmt::format("expected a non-negative integer, got {}", type_name(*n)));
    out = static_cast<T>(*n->value<int64_t>());
  }
  void number(const toml::table& t, const std::string& pf, const char* key, double& out) {
    const toml::node* n = t.get(key);
    if (!n) return;
    if (!n->is_number()) return error(*n, pf + key, fmt::format("expected a number, got {}", type_name(*n)));
    out = *n->value<double>();
  }
  void boolean(const toml::table& t, const std::string& pf, const char* key, bool& out) {
    const toml::node* n = t.get(key);
    if (!n) return;
    if (!n->is_boolean()) return error(*n, pf + key, fmt::format("expected a boolean, got {}", type_name(*n)));
    out = *n->value<bool>();
  }
  void string(const toml::table& t, const std::string& pf, const char* key, std::string& out) {
    const toml::node* n = t.get(key);
    if (!n) return;
    if (!n->is_string()) return error(*n, pf + key, fmt::format("expected a string, got {}", type_name(*n)));
    out = *n->value<std::string>();
  }
  const toml::array* array(const toml::table& t, const std::string& pf, const char* key) {
    const toml::node* n = t.get(key);
    if (!n) return nullptr;
    if (!n->is_array()) {
      error(*n, pf + key, fmt::format("expected an array, got {}", type_name(*n)));
      return nullptr;
    }
    return n->as_array();
  }
  const toml::table* table(const toml::table& t, const std::string& pf, const char* key) {
    const toml::node* n = t.get(key);
    if (!n) return nullptr;
    if (!n->is_table()) {
      error(*n, pf + key, fmt::format("expected a table, got {}", type_name(*n)));
      return nullptr;
    }
    return n->as_table();
  }

 private:
  std::string path_;
};

void read_link(Reader& r, const toml::table& t, const std::string& pf, LinkConfig& l) {
  r.check_keys(t, pf, {"rate", "access_rate", "delay", "jitter", "jitter_reorder", "reorder",
                       "reorder_hold", "reorder_gap", "impair_data_only", "loss", "loss_model",
                       "ge_p", "ge_r", "ge_loss_good", "ge_loss_bad", "drop", "duplicate",
                       "corrupt", "queue", "queue_bytes", "aqm", "codel_target", "codel_interval",
                       "codel_ecn", "ecn_threshold", "retreat_every", "retreat_units"});
  r.rate(t, pf, "rate", l.rate_bps);
  r.rate(t, pf, "access_rate", l.access_rate_bps);
  r.duration(t, pf, "delay", l.delay);
  r.duration(t, pf, "jitter", l.jitter);
  r.boolean(t, pf, "jitter_reorder", l.jitter_reorder);
  r.fraction(t, pf, "reorder", l.reorder);
  r.duration(t, pf, "reorder_hold", l.reorder_hold);
  r.integer(t, pf, "reorder_gap", l.reorder_gap);
  r.boolean(t, pf, "impair_data_only", l.impair_data_only);
  r.fraction(t, pf, "loss", l.loss);
  std::string model;
  r.string(t, pf, "loss_model", model);
  if (model == "gilbert-elliott" || model == "gilbert" || model == "ge") l.loss_model = LossModel::kGilbertElliott;
  else if (!model.empty() && model != "bernoulli")
    r.error(*t.get("loss_model"), pf + "loss_model", "expected \"bernoulli\" or \"gilbert-elliott\"");
  r.fraction(t, pf, "ge_p", l.ge_p);
  r.fraction(t, pf, "ge_r", l.ge_r);
  r.fraction(t, pf, "ge_loss_good", l.ge_loss_good);
  r.fraction(t, pf, "ge_loss_bad", l.ge_loss_bad);
  if (const toml::array* a = r.array(t, pf, "drop")) {
    for (auto&& e : *a) {
      if (!e.is_integer() || *e.value<int64_t>() < 1) r.error(e, pf + "drop", "expected packet numbers (integers from 1)");
      else l.drop_packets.push_back(static_cast<uint64_t>(*e.value<int64_t>()));
    }
  }
  r.fraction(t, pf, "duplicate", l.duplicate);
  r.fraction(t, pf, "corrupt", l.corrupt);
  r.integer(t, pf, "queue", l.queue_packets);
  r.size(t, pf, "queue_bytes", l.queue_bytes);
  std::string aqm;
  r.string(t, pf, "aqm", aqm);
  if (aqm == "codel") l.aqm = Aqm::kCoDel;
  else if (!aqm.empty() && aqm != "droptail" && aqm != "drop-tail")
    r.error(*t.get("aqm"), pf + "aqm", "expected \"droptail\" or \"codel\"");
  r.duration(t, pf, "codel_target", l.codel.target);
  r.duration(t, pf, "codel_interval", l.codel.interval);
  r.boolean(t, pf, "codel_ecn", l.codel.ecn);
  r.integer(t, pf, "ecn_threshold", l.ecn_threshold);
  r.integer(t, pf, "retreat_every", l.retreat_every);
  r.integer(t, pf, "retreat_units", l.retreat_units);
}

void read_host(Reader& r, const toml::table& t, const std::string& pf, HostSpec& h) {
  StackConfig probe;
  for (auto&& [k, v] : t) {
    std::string key(k.str());
    if (key == "mtu") {
      r.integer(t, pf, "mtu", h.mtu);
      continue;
    }
    std::string text;
    if (auto s = v.value<std::string>()) text = *s;
    else if (v.is_integer()) text = std::to_string(*v.value<int64_t>());
    else if (v.is_boolean()) text = *v.value<bool>() ? "1" : "0";
    else if (const toml::array* a = v.as_array()) {
      for (auto&& e : *a) text += (text.empty() ? "" : " ") + std::to_string(e.value<int64_t>().value_or(0));
    } else {
      r.error(v, pf + key, fmt::format("expected a sysctl value (string, integer, boolean or array), got {}",
                                       Reader::type_name(v)));
      continue;
    }
    // Validate now, so a bad key is reported with its line.
    std::string err = probe.set(key, text);
    if (!err.empty()) r.error(v, pf + key, err);
    else h.sysctl.emplace_back(key, text);
  }
}

// A group name becomes part of metric names (group.<name>.share), which
// expectations parse as [A-Za-z0-9_.]: only letters, digits and '_'.
bool metric_word(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// `count` replicates the flow; `start_step` staggers the replicas' starts.
void read_flow(Reader& r, const toml::table& t, const std::string& pf, FlowSpec& f, int* count,
               Duration* start_step) {
  r.check_keys(t, pf, {"kind", "sender", "start", "bytes", "duration", "records", "write_size",
                       "reader_rate", "reader_chunk", "sndbuf", "rcvbuf", "cc", "request", "response",
                       "transactions", "delivered_at", "count", "start_step", "group"});
  std::string kind;
  r.string(t, pf, "kind", kind);
  if (kind == "rr" || kind == "request-response") f.kind = AppKind::kRequestResponse;
  else if (!kind.empty() && kind != "bulk" && kind != "records")
    r.error(*t.get("kind"), pf + "kind", "expected \"bulk\", \"records\" or \"rr\"");
  int sender = 1;
  r.integer(t, pf, "sender", sender);
  f.sender = sender > 0 ? sender - 1 : 0;
  Duration start;
  r.duration(t, pf, "start", start);
  f.start = Time::zero() + start;
  r.size(t, pf, "bytes", f.bytes);
  r.duration(t, pf, "duration", f.send_for);
  if (const toml::array* a = r.array(t, pf, "records")) {
    f.write_sizes.clear();
    for (auto&& e : *a) {
      std::string text = e.is_integer() ? std::to_string(*e.value<int64_t>()) : e.value<std::string>().value_or("?");
      auto v = parse_size(text);
      if (!v || *v == 0) r.error(e, pf + "records", "expected record sizes (\"16KB\" or bytes)");
      else f.write_sizes.push_back(*v);
    }
  }
  uint64_t ws = 0;
  r.size(t, pf, "write_size", ws);
  if (ws) f.write_sizes = {ws};
  if (f.write_sizes.empty()) f.write_sizes = {65536};
  r.rate(t, pf, "reader_rate", f.reader_rate_bps);
  r.size(t, pf, "reader_chunk", f.reader_chunk);
  r.size(t, pf, "sndbuf", f.sndbuf);
  r.size(t, pf, "rcvbuf", f.rcvbuf);
  r.string(t, pf, "cc", f.cc);
  r.size(t, pf, "request", f.request);
  r.size(t, pf, "response", f.response);
  r.integer(t, pf, "transactions", f.transactions);
  r.duration(t, pf, "delivered_at", f.delivered_at);
  r.integer(t, pf, "count", *count);
  r.duration(t, pf, "start_step", *start_step);
  r.string(t, pf, "group", f.group);
  if (t.get("group") && !metric_word(f.group))
    r.error(*t.get("group"), pf + "group", "expected a name of letters, digits and '_'");
  if (f.group.empty() && metric_word(f.cc)) f.group = f.cc;
  if (f.kind == AppKind::kBulk && f.bytes == 0 && f.send_for == Duration::zero())
    r.error(t, pf.substr(0, pf.size() - 1), "a bulk flow needs `bytes` or `duration`");
}

void read_flows(Reader& r, const toml::table& root, Scenario& sc) {
  const toml::array* flows = r.array(root, "", "flow");
  if (!flows) return;
  int id = 1;
  for (size_t i = 0; i < flows->size(); ++i) {
    const toml::node& n = (*flows)[i];
    std::string pf = fmt::format("flow.{}.", i + 1);
    if (!n.is_table()) {
      r.error(n, pf, "expected a table ([[flow]])");
      continue;
    }
    FlowSpec f;
    int count = 1;
    Duration step;
    read_flow(r, *n.as_table(), pf, f, &count, &step);
    for (int k = 0; k < count; ++k) {
      FlowSpec c = f;
      c.id = id++;
      c.start = f.start + step * k;
      if (count > 1) c.sender = (f.sender + k) % std::max(1, sc.senders);
      sc.flows.push_back(c);
    }
  }
}

// [[topology.path]]: one link table per parallel path of the ecmp
// topology; ECMP needs two or more (RFC 2992 §1: a choice among next hops).
void read_paths(Reader& r, const toml::table& t, Scenario& sc) {
  const toml::array* a = r.array(t, "topology.", "path");
  if (sc.topology != Topology::kEcmp) {
    if (a) r.error(*t.get("path"), "topology.path", "only with kind = \"ecmp\"");
    return;
  }
  if (!a || a->size() < 2) {
    r.error(a ? *t.get("path") : t, "topology.path", "kind = \"ecmp\" needs two or more [[topology.path]] tables");
    return;
  }
  for (size_t i = 0; i < a->size(); ++i) {
    const std::string pf = fmt::format("topology.path.{}.", i + 1);
    if (!(*a)[i].is_table()) {
      r.error((*a)[i], pf, "expected a table ([[topology.path]])");
      continue;
    }
    sc.paths.emplace_back();
    read_link(r, *(*a)[i].as_table(), pf, sc.paths.back());
  }
}

// `family`: every host and flow over IPv4 (default) or IPv6.
void read_family(Reader& r, const toml::table& root, Scenario& sc) {
  std::string f;
  r.string(root, "", "family", f);
  if (f == "ipv6") sc.family = Family::kIpv6;
  else if (!f.empty() && f != "ipv4") r.error(*root.get("family"), "family", "expected \"ipv4\" or \"ipv6\"");
}

void read_topology(Reader& r, const toml::table& root, Scenario& sc) {
  const toml::table* t = r.table(root, "", "topology");
  if (!t) return;
  r.check_keys(*t, "topology.", {"kind", "senders", "access_delays", "access", "path"});
  std::string kind;
  r.string(*t, "topology.", "kind", kind);
  if (kind == "dumbbell") sc.topology = Topology::kDumbbell;
  else if (kind == "ecmp") sc.topology = Topology::kEcmp;
  else if (!kind.empty() && kind != "two-hosts")
    r.error(*t->get("kind"), "topology.kind", "expected \"two-hosts\", \"dumbbell\" or \"ecmp\"");
  read_paths(r, *t, sc);
  r.integer(*t, "topology.", "senders", sc.senders);
  if (const toml::array* a = r.array(*t, "topology.", "access_delays")) {
    for (auto&& e : *a) {
      auto v = parse_duration(e.is_string() ? *e.value<std::string>()
                                            : e.is_number() ? fmt::format("{}", *e.value<double>()) : "?");
      if (!v) r.error(e, "topology.access_delays", "expected durations (\"10ms\")");
      else sc.access_delays.push_back(*v);
    }
  }
  if (const toml::table* a = r.table(*t, "topology.", "access")) read_link(r, *a, "topology.access.", sc.access);
}

void read_expectations(Reader& r, const toml::table& root, Scenario& sc) {
  const toml::array* a = r.array(root, "", "expect");
  if (!a) return;
  for (auto&& e : *a) {
    if (!e.is_string()) {
      r.error(e, "expect", fmt::format("expected a string like \"flow.1.goodput_mbps >= 45\", got {}",
                                       Reader::type_name(e)));
      continue;
    }
    auto x = parse_expectation(*e.value<std::string>());
    if (!x) {
      r.error(e, "expect", x.error());
      continue;
    }
    x->line = static_cast<int>(e.source().begin.line);
    sc.expects.push_back(*x);
  }
}

// [contrast]: `set` (the overrides, at least one) and `note`. Expectations
// on "contrast.<metric>" need it.
void read_contrast(Reader& r, const toml::table& root, Scenario& sc) {
  if (const toml::table* c = r.table(root, "", "contrast")) {
    r.check_keys(*c, "contrast.", {"set", "note"});
    if (const toml::array* a = r.array(*c, "contrast.", "set"))
      for (auto&& e : *a) {
        if (!e.is_string()) r.error(e, "contrast.set", "expected strings \"key=value\"");
        else sc.contrast_set.push_back(*e.value<std::string>());
      }
    r.string(*c, "contrast.", "note", sc.contrast_note);
    if (sc.contrast_set.empty()) r.error(*c, "contrast.set", "expected at least one \"key=value\"");
  }
  if (!sc.contrast_set.empty()) return;
  for (const auto& x : sc.expects)
    if (is_contrast_metric(x.metric))
      r.errors.push_back(fmt::format("{}:{}: expect: {} needs a [contrast] table", sc.path, x.line, x.metric));
}

// A sysctl's name without the prefix StackConfig::set also accepts.
std::string_view sysctl_short(std::string_view key) {
  for (std::string_view prefix : {"net.ipv4.", "net.ipv6.", "net.core."})
    if (key.substr(0, prefix.size()) == prefix) return key.substr(prefix.size());
  return key;
}

// "a.b.3.c=value": walks tables (and 1-based indices into arrays of tables),
// creating tables as needed, and sets the value parsed as TOML (a bare word
// that is not valid TOML is taken as a string).
Expected<bool, std::string> apply_override(toml::table& root, std::string_view kv) {
  size_t eq = kv.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return Unexpected(fmt::format("--set {}: expected key=value", kv));
  std::string key(kv.substr(0, eq));
  std::string text(kv.substr(eq + 1));
  std::vector<std::string> parts;
  for (size_t b = 0;;) {
    // Under host.<side>, the rest is one sysctl name, dots and all
    // ("host.sender.net.ipv4.tcp_plb_enabled=0"), as a quoted TOML key.
    const bool sysctl_name = parts.size() == 2 && parts[0] == "host";
    size_t d = sysctl_name ? std::string::npos : key.find('.', b);
    parts.push_back(key.substr(b, d == std::string::npos ? std::string::npos : d - b));
    if (d == std::string::npos) break;
    b = d + 1;
  }
  toml::table* t = &root;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    toml::node* n = t->get(parts[i]);
    if (n && n->is_array()) {
      size_t idx = 0;
      auto [p, ec] = std::from_chars(parts[i + 1].data(), parts[i + 1].data() + parts[i + 1].size(), idx);
      toml::array* arr = n->as_array();
      if (ec != std::errc() || idx < 1 || idx > arr->size() || !(*arr)[idx - 1].is_table())
        return Unexpected(fmt::format("--set {}: '{}' has no element {}", key, parts[i], parts[i + 1]));
      t = (*arr)[idx - 1].as_table();
      ++i;
      if (i + 1 >= parts.size()) return Unexpected(fmt::format("--set {}: names a table, not a value", key));
      continue;
    }
    if (!n) n = &t->insert_or_assign(parts[i], toml::table{}).first->second;
    if (!n->is_table()) return Unexpected(fmt::format("--set {}: '{}' is not a table", key, parts[i]));
    t = n->as_table();
  }
  // A host's sysctl may be spelt with or without its net.ipv4./net.core.
  // prefix; the override replaces the file's setting in either spelling.
  if (parts.size() == 3 && parts[0] == "host") {
    std::vector<std::string> same;
    for (auto&& [k, v] : *t)
      if (sysctl_short(k.str()) == sysctl_short(parts.back())) same.emplace_back(k.str());
    for (const auto& k : same) t->erase(k);
  }
  toml::parse_result pr = toml::parse("v = " + text);
  if (pr && pr.table().get("v")) t->insert_or_assign(parts.back(), *pr.table().get("v"));
  else t->insert_or_assign(parts.back(), text);
  return true;
}

Expected<Scenario, std::string> interpret(const toml::table& root, const std::string& path) {
  Reader r(path);
  Scenario sc;
  sc.path = path;
  r.check_keys(root, "", {"name", "description", "note", "duration", "seed", "seeds", "topology", "link",
                          "host", "flow", "expect", "baseline", "contrast", "wedged_ratio", "trace", "capture",
                          "measure_from", "family"});
  r.string(root, "", "name", sc.name);
  r.string(root, "", "description", sc.description);
  r.string(root, "", "note", sc.note);
  r.duration(root, "", "duration", sc.duration);
  if (const toml::node* n = root.get("seeds")) {
    std::string text = n->is_string() ? *n->value<std::string>() : "";
    if (n->is_integer()) text = std::to_string(*n->value<int64_t>());
    if (const toml::array* a = n->as_array())
      for (auto&& e : *a) text += (text.empty() ? "" : ",") + std::to_string(e.value<int64_t>().value_or(-1));
    auto v = parse_seed_list(text);
    if (!v) r.error(*n, "seeds", v.error());
    else sc.seeds = *v;
  } else if (root.get("seed")) {
    uint64_t s = 1;
    r.integer(root, "", "seed", s);
    sc.seeds = {s};
  }
  read_family(r, root, sc);
  read_topology(r, root, sc);
  if (const toml::table* l = r.table(root, "", "link")) {
    r.check_keys(*l, "link.", {"fwd", "rev"});
    if (const toml::table* t = r.table(*l, "link.", "fwd")) read_link(r, *t, "link.fwd.", sc.fwd);
    if (const toml::table* t = r.table(*l, "link.", "rev")) read_link(r, *t, "link.rev.", sc.rev);
  }
  if (const toml::table* h = r.table(root, "", "host")) {
    r.check_keys(*h, "host.", {"client", "server", "sender", "receiver"});
    for (const char* k : {"client", "sender"})
      if (const toml::table* t = r.table(*h, "host.", k)) read_host(r, *t, fmt::format("host.{}.", k), sc.client);
    for (const char* k : {"server", "receiver"})
      if (const toml::table* t = r.table(*h, "host.", k)) read_host(r, *t, fmt::format("host.{}.", k), sc.server);
  }
  read_flows(r, root, sc);
  r.duration(root, "", "measure_from", sc.measure_from);
  if (root.get("measure_from") && sc.measure_from >= sc.duration)
    r.error(*root.get("measure_from"), "measure_from", "must be before the end of the run (`duration`)");
  for (auto& f : sc.flows) f.window_start = Time::zero() + sc.measure_from;
  read_expectations(r, root, sc);
  if (const toml::table* b = r.table(root, "", "baseline")) {
    r.check_keys(*b, "baseline.", {"set"});
    if (const toml::array* a = r.array(*b, "baseline.", "set"))
      for (auto&& e : *a) {
        if (!e.is_string()) r.error(e, "baseline.set", "expected strings \"key=value\"");
        else sc.baseline_set.push_back(*e.value<std::string>());
      }
  }
  read_contrast(r, root, sc);
  r.number(root, "", "wedged_ratio", sc.wedged_ratio);
  r.boolean(root, "", "trace", sc.trace);
  r.boolean(root, "", "capture", sc.capture);
  if (sc.flows.empty() && r.errors.empty()) r.errors.push_back(fmt::format("{}: no [[flow]] defined", path));
  if (sc.topology != Topology::kTwoHosts) {
    for (const auto& f : sc.flows)
      if (f.sender >= sc.senders)
        r.errors.push_back(fmt::format("{}: flow.{}.sender: {} exceeds topology.senders = {}", path, f.id,
                                       f.sender + 1, sc.senders));
  }
  if (sc.name.empty()) {
    size_t slash = path.find_last_of('/');
    std::string base = path.substr(slash == std::string::npos ? 0 : slash + 1);
    sc.name = base.substr(0, base.rfind(".toml"));
  }
  if (!r.errors.empty()) {
    std::string all;
    for (auto& e : r.errors) all += (all.empty() ? "" : "\n") + e;
    return Unexpected(all);
  }
  return sc;
}

}  // namespace

Expected<std::vector<uint64_t>, std::string> parse_seed_list(std::string_view s) {
  std::vector<uint64_t> out;
  auto num = [](std::string_view t, uint64_t* v) {
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), *v);
    return ec == std::errc() && p == t.data() + t.size() && !t.empty();
  };
  while (!s.empty()) {
    size_t comma = s.find(',');
    std::string_view item = s.substr(0, comma);
    size_t dots = item.find("..");
    uint64_t a = 0, b = 0;
    if (dots != std::string_view::npos) {
      if (!num(item.substr(0, dots), &a) || !num(item.substr(dots + 2), &b) || b < a || b - a > 100000)
        return Unexpected(fmt::format("'{}': expected a seed range like 1..12", item));
      // Stop at b itself: `v <= b` never fails when b is the largest uint64_t.
      for (uint64_t v = a;; ++v) {
        out.push_back(v);
        if (v == b) break;
      }
    } else {
      if (!num(item, &a)) return Unexpected(fmt::format("'{}': expected a seed (integer)", item));
      out.push_back(a);
    }
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  if (out.empty()) return Unexpected(std::string("expected seeds like \"1..12\" or [1, 2]"));
  return out;
}

Expected<Expectation, std::string> parse_expectation(std::string_view text) {
  Expectation x;
  x.text = std::string(text);
  size_t i = 0;
  auto skip = [&] {
    while (i < text.size() && text[i] == ' ') ++i;
  };
  skip();
  size_t b = i;
  while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_' || text[i] == '.')) ++i;
  x.metric = std::string(text.substr(b, i - b));
  skip();
  for (const char* op : {">=", "<=", "==", "!=", ">", "<"}) {
    std::string_view o(op);
    if (text.substr(i, o.size()) == o) {
      x.op = op;
      i += o.size();
      break;
    }
  }
  skip();
  std::string_view rest = text.substr(i);
  while (!rest.empty() && rest.back() == ' ') rest.remove_suffix(1);
  auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), x.value);
  if (x.metric.empty() || x.op.empty() || ec != std::errc() || p != rest.data() + rest.size() || rest.empty())
    return Unexpected(fmt::format("'{}': expected \"<metric> <op> <number>\" with op one of >= <= == != > <", text));
  return x;
}

// Scenario files are ASCII. toml++ 3.3.0 (Debian 12) reaches
// __builtin_unreachable() on some multi-byte UTF-8 input (found by
// fuzz_scenario), so anything outside ASCII is refused, with its place,
// before the parser sees it.
namespace {
Expected<bool, std::string> require_ascii(std::string_view text, const std::string& path) {
  size_t line = 1, col = 1;
  for (unsigned char c : text) {
    if (c >= 0x80 || (c < 0x20 && c != '\n' && c != '\r' && c != '\t'))
      return Unexpected(fmt::format("{}:{}:{}: byte 0x{:02x}: scenario files must be printable ASCII", path, line,
                                    col, c));
    if (c == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return true;
}

// toml++ 3.3.0 also asserts (parse_key) when a table header's first
// character can start no key, e.g. "[|x]" (found by fuzz_scenario): such a
// header is refused here, with its place, before toml++ sees it. The check
// is by line: a continuation line of a multi-line array that begins with
// "[{", "[]" or a lone "[" is refused too (write such arrays on one line).
Expected<bool, std::string> require_header_keys(std::string_view text, const std::string& path) {
  auto key_start = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '"' || c == '\'';
  };
  size_t line = 1, pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(pos, end - pos);
    size_t i = l.find_first_not_of(" \t");
    if (i != std::string_view::npos && l[i] == '[') {
      // "[" or "[[" (array of tables), then optional blanks, then a key:
      // a third "[" ("[[[x]]", found by fuzz_scenario) starts no key.
      size_t k = i + 1;
      if (k < l.size() && l[k] == '[') ++k;
      // A header line that ends before any key ("[" alone, fuzz_scenario)
      // makes toml++ look for the key on the next line: refused too.
      k = l.find_first_not_of(" \t", k);
      if (k == std::string_view::npos || !key_start(l[k]))
        return Unexpected(fmt::format("{}:{}:{}: a table header must start with a key", path, line,
                                      std::min(k, l.size()) + 1));
    }
    pos = end + 1;
    ++line;
  }
  return true;
}
}  // namespace

static Expected<Scenario, std::string> parse_scenario_only(std::string_view text, const std::string& path,
                                                    const std::vector<std::string>& overrides) {
  if (auto ascii = require_ascii(text, path); !ascii) return Unexpected(ascii.error());
  if (auto hdr = require_header_keys(text, path); !hdr) return Unexpected(hdr.error());
  for (const auto& kv : overrides)
    if (auto ascii = require_ascii(kv, "--set"); !ascii) return Unexpected(ascii.error());
  toml::parse_result pr = toml::parse(text, path);
  if (!pr) {
    const auto& e = pr.error();
    return Unexpected(fmt::format("{}:{}:{}: {}", path, e.source().begin.line, e.source().begin.column,
                                  e.description()));
  }
  toml::table root = std::move(pr).table();
  for (const auto& kv : overrides) {
    auto ok = apply_override(root, kv);
    if (!ok) return Unexpected(ok.error());
  }
  auto sc = interpret(root, path);
  if (sc) {
    sc->source = std::string(text);
    sc->overrides = overrides;
  }
  return sc;
}

// The contrast and the baseline are checked when the file loads, so a bad
// key in their `set` is reported before anything runs.
Expected<Scenario, std::string> parse_scenario(std::string_view text, const std::string& path,
                                               const std::vector<std::string>& overrides) {
  auto sc = parse_scenario_only(text, path, overrides);
  if (!sc) return sc;
  for (const auto* set : {&sc->baseline_set, &sc->contrast_set}) {
    if (set->empty()) continue;
    if (auto v = derive_scenario(*sc, *set); !v)
      return Unexpected(fmt::format("{}: {}.set: {}", path, set == &sc->baseline_set ? "baseline" : "contrast",
                                    v.error()));
  }
  return sc;
}

Expected<Scenario, std::string> derive_scenario(const Scenario& sc, const std::vector<std::string>& extra) {
  std::vector<std::string> ov = sc.overrides;
  ov.insert(ov.end(), extra.begin(), extra.end());
  auto v = parse_scenario_only(sc.source, sc.path, ov);
  if (v) {
    v->contrast_set.clear();
    std::erase_if(v->expects, [](const Expectation& x) { return is_contrast_metric(x.metric); });
  }
  return v;
}

Expected<Scenario, std::string> load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  std::ifstream in(path);
  if (!in) return Unexpected(fmt::format("{}: cannot open", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_scenario(ss.str(), path, overrides);
}

}  // namespace weir::sim
