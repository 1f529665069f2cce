#include "cli_args.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <utility>

namespace mpt::cli {
namespace {

bool is_flag(const CLI::Option& opt) { return opt.get_expected_max() == 0; }

bool takes_many(const CLI::Option& opt) {
    return opt.get_expected_max() >= CLI::detail::expected_max_vector_size;
}

// The option of sub named `name` ("--trie", "-o"), or null.
const CLI::Option* find_option(const CLI::App& sub, const std::string& name) {
    for (const CLI::Option* opt : sub.get_options()) {
        if (!opt->get_positional() && opt->check_name(name)) return opt;
    }
    return nullptr;
}

std::vector<std::string> option_names(const CLI::App& sub) {
    std::vector<std::string> names;
    for (const CLI::Option* opt : sub.get_options()) {
        for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
    }
    return names;
}

// Edits (insert, delete, replace, swap two neighbours) that turn a into b.
size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        for (size_t j = 1; j <= b.size(); ++j) {
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                                d[i - 1][j - 1] + (a[i - 1] != b[j - 1] ? 1 : 0)});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
            }
        }
    }
    return d[a.size()][b.size()];
}

// The placeholder --help shows for an option's value when the option names none: what the
// value is, by the option's name; VALUE for a name not listed.
std::string value_name(const CLI::Option& opt) {
    if (!opt.get_option_text().empty()) return opt.get_option_text();
    static constexpr std::pair<const char*, const char*> kNames[] = {
        {"trie", "NAME"},        {"trie-b", "NAME"},  {"state", "FILE"},      {"vectors", "PATH"},
        {"list", "FILE"},        {"block", "FILE"},   {"threads", "N"},       {"output", "FILE"},
        {"from", "KEY"},         {"to", "KEY"},       {"range", "FROM"},      {"limit", "N"},
        {"max-bytes", "B"},      {"verify", "FILE"},  {"root", "ROOT"},       {"account", "ADDR"},
        {"slot", "SLOT"},        {"leaves", "N,..."}, {"samples", "N"},       {"memory", "SIZE"},
        {"max-input", "SIZE"},   {"tmp", "DIR"},      {"keys", "FILE"},       {"depth", "N"},
        {"key", "TYPE:VALUE"},   {"index", "I"},      {"element-slots", "N"}, {"changes", "DOC"},
        {"expect-root", "ROOT"}, {"header", "FILE"},
    };
    for (const std::string& l : opt.get_lnames()) {
        for (const auto& [name, value] : kNames) {
            if (l == name) return value;
        }
    }
    return "VALUE";
}

std::string upper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

// The option a CLI11 message names first ("--trie: 1 required TEXT missing", "Expected
// exactly 1 arguments to --trie, got 0"): its display name, or the name as written.
std::string named_in(const CLI::App& sub, const std::string& name) {
    for (const CLI::Option* opt : sub.get_options()) {
        if (opt->get_name() == name || opt->check_name(name) ||
            (opt->get_positional() && opt->get_name(true, false) == name)) {
            return display_name(*opt);
        }
    }
    return name;
}

}  // namespace

std::string display_name(const CLI::Option& opt) {
    if (opt.get_positional()) return upper(opt.get_name(true, false));
    if (!opt.get_lnames().empty()) return "--" + opt.get_lnames().front();
    if (!opt.get_snames().empty()) return "-" + opt.get_snames().front();
    return opt.get_name();
}

std::string closest_name(std::string_view given, const std::vector<std::string>& names) {
    const size_t allowed = std::max<size_t>(1, given.size() / 3);
    std::string best;
    size_t best_distance = allowed + 1;
    for (const std::string& n : names) {
        const size_t d = edit_distance(given, n);
        // A prefix of exactly one name counts as that name (--sec for --secure).
        const bool prefix = given.size() >= 3 && n.compare(0, given.size(), given) == 0;
        if (prefix && best_distance > 0) {
            best = n;
            best_distance = 0;
        } else if (d < best_distance) {
            best = n;
            best_distance = d;
        }
    }
    return best_distance <= allowed ? best : std::string();
}

std::string order_arguments(const CLI::App& sub, std::vector<std::string>& args) {
    std::vector<std::string> flags;
    std::vector<std::string> rest;
    const CLI::Option* waiting = nullptr;  // an option still without its value
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--") {
            if (waiting != nullptr) break;
            rest.insert(rest.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
            break;
        }
        const bool dashed = a.size() > 1 && a[0] == '-';
        if (!dashed) {
            rest.push_back(a);
            waiting = nullptr;
            continue;
        }
        // "--name=value", "-oVALUE", "--name", "-o".
        const bool is_long = a[1] == '-';
        const std::string name = is_long ? a.substr(0, a.find('=')) : a.substr(0, 2);
        const bool attached = is_long ? name.size() < a.size() : a.size() > 2;
        const CLI::Option* opt = find_option(sub, name);
        if (opt == nullptr) {
            if (waiting != nullptr) {  // a value that starts with a dash: --limit -1
                rest.push_back(a);
                waiting = nullptr;
                continue;
            }
            const std::string near = closest_name(name, option_names(sub));
            if (!near.empty()) return "unknown option " + a + " (did you mean " + near + "?)";
            return "unknown option " + a + " (`mpt " + sub.get_name() +
                   " --help` lists the options; an argument that starts with - goes after --)";
        }
        if (is_flag(*opt)) {
            flags.push_back(a);
            continue;
        }
        if (waiting != nullptr) break;  // an option where a value was due
        rest.push_back(a);
        if (!attached) waiting = opt;
    }
    if (waiting != nullptr) return display_name(*waiting) + " needs a value";
    flags.insert(flags.end(), rest.begin(), rest.end());
    args = std::move(flags);
    return {};
}

std::string usage_message(const CLI::App& sub, const CLI::ParseError& e) {
    std::string what = e.what();  // returned as it is when nothing better is known
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
        for (const CLI::Option* opt : sub.get_options()) {
            if (opt->get_required() && opt->count() == 0)
                return display_name(*opt) + " is required";
        }
        return what;
    }
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
        // CLI11 lists the extra arguments last first.
        std::vector<std::string> extra;
        std::istringstream in(what.substr(what.find(':') + 1));
        for (std::string word; in >> word;) extra.insert(extra.begin(), word);
        std::string line = extra.size() > 1 ? "unexpected arguments:" : "unexpected argument:";
        for (const std::string& w : extra) line += " " + w;
        return line;
    }
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
        // An option of one value given again: "NAME: At Most 1 required but received 2".
        if (const size_t at = what.find(": At Most "); at != std::string::npos) {
            const std::string most = what.substr(at + 10, what.find(' ', at + 10) - at - 10);
            return named_in(sub, what.substr(0, at)) + " takes " +
                   (most == "1" ? std::string("one value") : "at most " + most + " values") +
                   ", given " + what.substr(what.rfind(' ') + 1);
        }
        std::string name = what.substr(0, what.find(':'));
        if (const size_t to = what.find(" arguments to "); to != std::string::npos) {
            name = what.substr(to + 14, what.find(',', to) - to - 14);
        }
        return named_in(sub, name) + " needs a value";
    }
    if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr ||
        dynamic_cast<const CLI::ConversionError*>(&e) != nullptr) {
        // "NAME: Value X not in range A to B", "NAME: <a validator's own words>",
        // "Could not convert: NAME = X", "The value X is not an allowed value for NAME".
        if (what.rfind("Could not convert: ", 0) == 0) {
            const std::string body = what.substr(19);
            const size_t eq = body.find(" = ");
            return named_in(sub, body.substr(0, eq)) +
                   ": not a valid value: " + (eq == std::string::npos ? body : body.substr(eq + 3));
        }
        if (const size_t v = what.find("The value "); v == 0) {
            const size_t for_at = what.rfind(" for ");
            const std::string value = what.substr(10, what.find(" is not") - 10);
            return named_in(sub, what.substr(for_at + 5)) + ": not a valid value: " + value;
        }
        const size_t colon = what.find(": ");
        if (colon == std::string::npos) return what;
        const std::string name = named_in(sub, what.substr(0, colon));
        std::string detail = what.substr(colon + 2);
        if (detail.rfind("Value ", 0) == 0) {
            const size_t not_in = detail.find(" not in range ");
            const size_t to = detail.find(" to ", not_in);
            if (not_in != std::string::npos && to != std::string::npos) {
                detail = "must be " + detail.substr(not_in + 14, to - not_in - 14) + " to " +
                         detail.substr(to + 4) + ", got " + detail.substr(6, not_in - 6);
            }
        }
        // A set's member check: "decode,encode" is not a value a user typed.
        if (const size_t in = detail.find(" not in {"); in != std::string::npos) {
            detail = "must be one of " + detail.substr(in + 9, detail.find('}') - in - 9) +
                     ", got " + detail.substr(0, in);
        }
        return name + ": " + detail;
    }
    return what;
}

std::string HelpFormatter::make_usage(const CLI::App* app, std::string) const {
    std::string line = "Usage: mpt";
    if (app->get_parent() != nullptr) {
        line += ' ';
        line += app->get_name();
    }
    if (!app->get_options([](const CLI::Option* o) { return o->nonpositional(); }).empty()) {
        line += " [OPTIONS]";
    }
    for (const CLI::Option* opt :
         app->get_options([](const CLI::Option* o) { return o->get_positional(); })) {
        line += ' ';
        line += make_option_usage(opt);
    }
    if (app->get_parent() == nullptr) line += " COMMAND ...";
    return line + "\n";
}

std::string HelpFormatter::make_option_name(const CLI::Option* opt, bool is_positional) const {
    if (is_positional) return display_name(*opt);
    return opt->get_name(false, true);
}

std::string HelpFormatter::make_option_opts(const CLI::Option* opt) const {
    if (opt->get_positional() || is_flag(*opt)) return {};
    return " " + value_name(*opt) + (takes_many(*opt) ? " ..." : "");
}

std::string HelpFormatter::make_option_desc(const CLI::Option* opt) const {
    std::string desc = opt->get_description();
    if (!opt->get_default_str().empty()) desc += " (default: " + opt->get_default_str() + ")";
    return desc;
}

std::string HelpFormatter::make_option_usage(const CLI::Option* opt) const {
    const std::string name = display_name(*opt) + (takes_many(*opt) ? "..." : "");
    return opt->get_required() ? name : "[" + name + "]";
}

std::string HelpFormatter::make_footer(const CLI::App* app) const {
    std::string own = app->get_footer();
    if (!own.empty()) own += "\n\n";
    return own + footer_ + "\n";
}

}  // namespace mpt::cli
