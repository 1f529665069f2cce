// mpt build: create a trie in a trie file, or apply key/value input to it as changes.
#include "commands.hpp"
#include "common.hpp"
#include "kv_memory.hpp"
#include "progress.hpp"

#include <mpt/core/hex.hpp>
#include <mpt/ops/bulk_build.hpp>
#include <mpt/ops/limits.hpp>
#include <mpt/ops/state_file.hpp>
#include <mpt/ops/state_root.hpp>
#include <mpt/ops/state_spill.hpp>
#include <mpt/ops/trie_file.hpp>
#include <mpt/state/document.hpp>
#include <mpt/state/document_stream.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cerrno>

#include <sys/stat.h>
#include <unistd.h>

namespace mpt::cli {
namespace {

struct BuildCmdOptions {
    std::string input;
    std::string output;
    std::string trie = "main";
    bool secure = false;
    bool replace = false;
    bool state = false;  // INPUT is a state document
    bool no_preimages = false;
    bool ignore_stated_roots = false;
    bool json = false;
    unsigned threads = 0;  // 0: the CPUs this process may run on
    KvMemoryFlags memory;
};

// What a bulk build of a document held whole takes, for each byte of its text: measured 1.93
// for 32-byte hex keys and values (270 bytes a pair of 140), with room.
constexpr double kBuildBytesPerTextByte = 2.5;
// What the whole path of --state takes for each byte of a document (measured: 6.6 for a
// generated alloc of 1M accounts and 10M slots, 500 MB, the file's mapping counted).
constexpr double kStateBuildBytesPerTextByte = 7.0;

// Writes output through the store with into(path): a new file under a name of its own until
// it is complete (make_new_file); an existing one, and one whose name another writer took
// meanwhile, in place.
template <typename R, typename Into>
Result<R> through_store(const std::string& output, Into&& into) {
    struct stat st {};
    if (::stat(output.c_str(), &st) != 0 && errno == ENOENT) {
        R built;
        MPT_TRY(const bool named, make_new_file(output, [&](const std::string& path) -> Status {
                    MPT_TRY(built, into(path));
                    return {};
                }));
        if (named) return built;
    }
    return into(output);
}

// A new file is written whole (bulk_build.hpp), or else through the store; an existing one,
// through the store.
Result<BuildResult> build(const std::string& output, const KvInput& input, const BuildOptions& b) {
    MPT_TRY(std::optional<BuildResult> fresh, build_new_trie_file(output, input, b));
    if (fresh) return *fresh;
    return through_store<BuildResult>(output, [&](const std::string& path) -> Result<BuildResult> {
        MPT_TRY(auto store, SqliteNodeStore::open(path, SqliteNodeStore::Mode::create));
        return build_trie(*store, input, b);
    });
}

// The answer to a document whose stated root its accounts do not give (mismatch says which).
int stated_root_refusal(const BuildCmdOptions& o, const std::string& mismatch) {
    eprint("mpt: root mismatch: {}\n",
           printable(o.input + ": " + mismatch +
                     "; no file written (--ignore-stated-roots builds it anyway)"));
    return kNegative;
}

// mpt build --state of a document larger than the memory budget allows to hold whole: its
// accounts and slots, and the rows of the tries, are sorted in runs that spill to temporary
// files.
int run_build_state_spilling(const BuildCmdOptions& o, TextStream& stream,
                             const KvMemoryPlan& plan) {
    StateBuildOptions b;
    b.preimages = !o.no_preimages;
    b.check_stated_roots = !o.ignore_stated_roots;
    // The sort of the accounts and slots takes 0.4 of the budget (plan), its merge's buffers
    // up to a quarter, the rows 0.2.
    ProgressLine progress("build", o.input + ": past --memory, sorting and writing");
    auto r =
        build_new_state_file_streamed(o.output, stream, b, plan.spill, plan.spill.run_bytes / 2);
    progress.stop();
    if (!r) {
        const Error& e = r.error();
        return report(e, e.file.empty() ? o.output : e.file);
    }
    if (!*r) {
        return report(Error{Errc::storage_io,
                            "cannot make the new file unnamed (the name is taken, or the file "
                            "system has no O_TMPFILE), which a build past --memory needs"},
                      o.output);
    }
    if (!(*r)->stated_mismatch.empty()) return stated_root_refusal(o, (*r)->stated_mismatch);
    const StateBuildResult& res = (*r)->result;
    if (o.json) {
        const nlohmann::ordered_json j = {
            {"root", to_hex(res.root)},          {"accounts", res.accounts},
            {"storageTries", res.storage_tries}, {"slots", res.slots},
            {"preimages", res.preimages},        {"codes", res.codes},
            {"rowsWritten", res.rows_written},   {"tempFiles", (*r)->doc.temp_files},
            {"tempBytes", (*r)->doc.temp_bytes}};
        fmt::print("{}\n", j.dump());
    } else {
        fmt::print("{}\n", to_hex(res.root));
    }
    return kOk;
}

// The roots a dump states, its own and each account's beside its slots, against the ones its
// accounts give: a dump cut short, or accounts changed by hand, make no state file. The line
// of the first that differs, or an empty string.
Result<std::string> stated_root_mismatch(const StateDoc& doc, unsigned threads) {
    for (const StateAccount& a : doc.accounts) {
        if (!a.claimed_storage_root || a.storage.empty()) continue;
        MPT_TRY(const Hash256 computed, storage_root(a));
        if (computed != *a.claimed_storage_root) {
            return "account " + (a.address ? to_hex(*a.address) : to_hex(a.address_hash)) +
                   " (line " + std::to_string(a.line) + "): the document gives storage root " +
                   to_hex(*a.claimed_storage_root) + ", its slots " + to_hex(computed);
        }
    }
    if (!doc.claimed_root) return std::string();
    MPT_TRY(const Hash256 computed, state_root(doc, threads));
    if (computed == *doc.claimed_root) return std::string();
    return "the document gives root " + to_hex(*doc.claimed_root) + ", its accounts " +
           to_hex(computed);
}

// mpt build --state: the account trie and the storage tries of a state document.
int run_build_state(const BuildCmdOptions& o) {
    if (o.secure) return report_usage("build: --state tries are secure already; drop --secure");
    if (o.trie != "main") {
        return report_usage("build: --state writes the account trie main and its storage tries");
    }
    const unsigned threads = o.threads != 0 ? o.threads : available_cpus();
    // An existing file takes the state through the store, held whole; a new one from a
    // document past the budget is built through the spilling sort (state_spill.hpp).
    struct stat out_st {};
    const bool exists = ::stat(o.output.c_str(), &out_st) == 0;
    const KvMemoryPlan plan = plan_kv_memory(o.memory.budget(), kStateBuildBytesPerTextByte, 0.4,
                                             o.memory.tmp_dir(), 1, regular_file_bytes(o.input));
    TextSource source;
    if (exists) {
        auto whole = load_input(o.input, o.memory.max_input);
        if (!whole) return report(whole.error());
        source.whole = std::move(*whole);
    } else {
        auto opened = open_text_source(o.input, plan.whole_limit, plan.piece_bytes,
                                       plan.max_entry_bytes, o.memory.max_input);
        if (!opened) return report(opened.error());
        source = std::move(*opened);
    }
    if (source.stream) return run_build_state_spilling(o, *source.stream, plan);
    Result<StateDoc> doc = Errc::internal;
    {
        const SigbusGuard guard(o.input);
        doc = parse_state_document(source.whole.view(), threads);
    }
    source.whole = InputText();
    if (!doc) {
        Error e = std::move(doc).error();
        if (e.file.empty()) e.file = o.input;
        return report(e);
    }
    if (!o.ignore_stated_roots) {
        auto mismatch = stated_root_mismatch(*doc, threads);
        if (!mismatch) return report(mismatch.error(), o.input);
        if (!mismatch->empty()) return stated_root_refusal(o, *mismatch);
    }
    StateBuildOptions b;
    b.replace = o.replace;
    b.preimages = !o.no_preimages;
    b.threads = threads;
    ProgressLine progress("build", o.input);
    progress.count("accounts");
    if (progress.shown()) {
        b.progress = [&progress](size_t done, size_t all) { progress.set(done, all); };
    }
    // A new file is written whole; an existing one, through the store.
    auto r = [&]() -> Result<StateBuildResult> {
        MPT_TRY(std::optional<StateBuildResult> fresh, build_new_state_file(o.output, *doc, b));
        if (fresh) return *fresh;
        return through_store<StateBuildResult>(
            o.output, [&](const std::string& path) -> Result<StateBuildResult> {
                MPT_TRY(auto store, SqliteNodeStore::open(path, SqliteNodeStore::Mode::create));
                return build_state(*store, *doc, b);
            });
    }();
    progress.stop();
    if (!r) return report(r.error(), o.output);
    if (o.json) {
        const nlohmann::ordered_json j = {
            {"root", to_hex(r->root)},          {"accounts", r->accounts},
            {"storageTries", r->storage_tries}, {"slots", r->slots},
            {"preimages", r->preimages},        {"codes", r->codes},
            {"rowsWritten", r->rows_written}};
        fmt::print("{}\n", j.dump());
    } else {
        fmt::print("{}\n", to_hex(r->root));
    }
    return kOk;
}

// Prints a key/value build's root, or with --json its result; with files (an input read in
// pieces), also what went to temporary files.
int print_build(const BuildCmdOptions& o, const BuildResult& r, const SpillFiles* files = nullptr) {
    if (!o.json) {
        fmt::print("{}\n", to_hex(r.root));
        return kOk;
    }
    nlohmann::ordered_json j = {{"root", to_hex(r.root)},
                                {"trie", canonical_trie_name(o.trie)},
                                {"created", r.created},
                                {"rowsWritten", r.rows_written},
                                {"rowsDeleted", r.rows_deleted}};
    if (files != nullptr) {
        j["tempFiles"] = files->files_made();
        j["tempBytes"] = files->bytes_written();
    }
    fmt::print("{}\n", j.dump());
    return kOk;
}

// A new file from a document larger than the memory budget allows to hold whole: its pairs
// and the trie's rows are sorted in runs that spill to temporary files.
int run_build_spilling(const BuildCmdOptions& o, KvStreamReader& stream, const KvMemoryPlan& plan,
                       BuildOptions& b) {
    SpillFiles files(plan.spill);
    SpillingPairSorter sorter(files);
    const uint64_t max_row = sqlite::default_length_limit();
    ProgressLine progress("build", o.input + ": past --memory, sorting");
    auto sorted = sort_kv_stream(
        stream, o.secure, o.secure && b.preimages, sorter,
        [&](const KvInput& piece) { return check_entry_limits(piece, o.secure, max_row); });
    if (!sorted) return report(sorted.error(), o.input);
    // The pairs' runs are merged while the rows are made: the rows take what a run took.
    const size_t row_bytes = plan.spill.run_bytes;
    progress.phase(o.input + ": past --memory, writing");
    auto r = build_new_trie_file_sorted(o.output, sorter, b, files, row_bytes);
    progress.stop();
    if (!r) return report(r.error(), o.output);
    if (!*r) {
        return report(Error{Errc::storage_io,
                            "cannot make the new file unnamed (the name is taken, or the file "
                            "system has no O_TMPFILE), which a build past --memory needs"},
                      o.output);
    }
    return print_build(o, **r, &files);
}

// An existing file and a document larger than the memory budget allows to hold whole: its
// pieces go through the store in one write (build_trie_streamed).
int run_update_streamed(const BuildCmdOptions& o, KvStreamReader& stream, const KvMemoryPlan& plan,
                        BuildOptions& b) {
    SpillFiles files(plan.spill);
    SpillingPairSorter sorter(files);
    const uint64_t max_row = sqlite::default_length_limit();
    auto store = SqliteNodeStore::open(o.output, SqliteNodeStore::Mode::create);
    if (!store) return report(store.error(), o.output);
    ProgressLine progress("build", o.input + ": past --memory, sorting and writing");
    auto r = build_trie_streamed(**store, stream, sorter, b, [&](const KvInput& piece) {
        return check_entry_limits(piece, o.secure, max_row);
    });
    progress.stop();
    // The input's errors name the input, the store's the file.
    if (!r) return report(r.error(), exit_code(r.error()) == kInput ? o.input : o.output);
    return print_build(o, *r, &files);
}

int run_build(const BuildCmdOptions& o) {
    if (o.output == "-") {
        return report_usage("build: -o: a trie file is a file; - (stdout) cannot be one");
    }
    if (o.output.empty()) return report_usage("build: -o: an empty file name");
    // A state document is told by its shape; --secure and --trie say key/value input.
    if (o.state || (!o.secure && o.trie == "main" && file_looks_like_state(o.input))) {
        return run_build_state(o);
    }
    BuildOptions b;
    b.trie = o.trie;
    b.secure = o.secure;
    b.replace = o.replace;
    b.preimages = !o.no_preimages;
    b.threads = o.threads != 0 ? o.threads : available_cpus();
    if (o.memory.memory != 0) b.bulk_memory = o.memory.memory;
    // A document past the budget is read in pieces: a new file is built through the
    // spilling sort, an existing one takes the pieces through the store.
    struct stat out_st {};
    const bool exists = ::stat(o.output.c_str(), &out_st) == 0;
    const KvMemoryPlan plan =
        plan_kv_memory(o.memory.budget(), kBuildBytesPerTextByte, 0.4, o.memory.tmp_dir(),
                       b.threads, regular_file_bytes(o.input));
    auto opened = open_text_source(o.input, plan.whole_limit, plan.piece_bytes,
                                   plan.max_entry_bytes, o.memory.max_input);
    if (!opened) return report(opened.error());
    TextSource source = std::move(*opened);
    if (source.stream) {
        // With a second thread, the next piece is parsed, in halves, while this one sorts or
        // applies the last.
        KvStreamReader reader(std::move(source.stream));
        reader.read_ahead(b.threads > 1);
        reader.parse_halves(b.threads > 1);
        return exists ? run_update_streamed(o, reader, plan, b)
                      : run_build_spilling(o, reader, plan, b);
    }
    InputText* text = &source.whole;
    Result<KvInput> input = Errc::internal;
    {
        const SigbusGuard guard(o.input);  // the file is mapped while it is parsed
        input = parse_kv(text->view(), b.threads);
    }
    if (!input) return report(input.error(), o.input);
    *text = InputText();  // the pairs live in the input's own arena
    // Entries no trie file could hold are refused before anything is written.
    if (auto s = check_entry_limits(*input, o.secure, sqlite::default_length_limit()); !s) {
        return report(s.error(), o.input);
    }
    ProgressLine progress("build", o.input);
    progress.count("pairs");
    if (progress.shown()) {
        b.progress = [&progress](size_t done, size_t all) { progress.set(done, all); };
    }
    auto r = build(o.output, *input, b);
    progress.stop();
    if (!r) return report(r.error(), o.output);
    return print_build(o, *r);
}

}  // namespace

void register_build(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<BuildCmdOptions>();
    sub->add_option("input", o->input, "Key/value file: JSON, or a text dump (- for stdin)")
        ->required();
    sub->add_option("-o,--output", o->output, "Trie file (SQLite); created if missing")->required();
    sub->add_option("--trie", o->trie, "Trie name in the file (a storage trie: 0x<account hash>)")
        ->capture_default_str();
    sub->add_flag("--secure", o->secure,
                  "Hash keys with keccak256; recorded with the trie and applied to later updates");
    sub->add_flag("--replace", o->replace, "Drop the trie's content first instead of updating it");
    sub->add_flag("--state", o->state,
                  "INPUT is a state document (genesis, alloc, geth or reth dump): write the "
                  "account trie main and every storage trie");
    sub->add_flag("--no-preimages", o->no_preimages,
                  "Do not record the preimages of hashed keys (addresses, slots, secure keys)");
    sub->add_flag("--ignore-stated-roots", o->ignore_stated_roots,
                  "--state: build a dump whose own root, or an account's storage root, is not "
                  "the one its accounts give (refused by default)");
    sub->add_flag("--json", o->json, "Print one JSON document");
    sub->add_option("--threads", o->threads,
                    "Threads for parsing a key/value file and hashing a new file's trie "
                    "(default: the CPUs available)")
        ->check(CLI::Range(1u, 1024u));
    add_kv_memory_flags(sub, o->memory);
    sub->footer(
        "An existing trie takes the input as changes: puts, overwrites, and deletes for null or\n"
        "\"\" values. All of it is one transaction; the new root is published last. A new\n"
        "file is written whole and takes its name only when complete. --state: the account\n"
        "trie main (kind state) and one storage trie per account with storage, named\n"
        "0x<keccak256(address)> (kind secure), with the preimages of their keys; an existing\n"
        "state is rebuilt with --replace.");
    sub->final_callback([o, &runner] { runner = [o] { return run_build(*o); }; });
}

}  // namespace mpt::cli
