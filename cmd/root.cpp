// mpt root: the root hash of key/value files, trie files or state documents, or a run of
// ethereum/tests vectors.
#include "commands.hpp"
#include "common.hpp"
#include "progress.hpp"

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/input/json_lexer.hpp>
#include <mpt/input/kv_format.hpp>
#include <mpt/ops/hash_counts.hpp>
#include <mpt/ops/kv_root.hpp>
#include <mpt/ops/state_root.hpp>
#include <mpt/ops/state_spill.hpp>
#include <mpt/state/document.hpp>
#include <mpt/state/document_stream.hpp>
#include <mpt/trie/stack_trie.hpp>
#include "kv_memory.hpp"
#include "vectors.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>

#include <sys/stat.h>

namespace mpt::cli {
namespace {

using ojson = nlohmann::ordered_json;

struct RootOptions {
    std::vector<std::string> inputs;
    std::string trie = "main";
    bool vectors = false;  // --vectors: the inputs are vector files or folders of them
    bool list = false;     // --list: the input is a JSON array of encoded items
    bool block = false;    // --block: the input is a block's RLP
    bool state = false;    // --state: the inputs are state documents
    bool secure = false;
    bool json = false;
    bool stats = false;    // --stats: the hashing and the bytes read, on stderr and in --json
    unsigned threads = 0;  // 0: the CPUs this process may run on
    bool trie_given = false;
    KvMemoryFlags memory;
};

// What the root of a document held whole takes, for each byte of its text: measured 1.57
// for 32-byte hex keys and values (220 bytes a pair of 140), with room.
constexpr double kRootBytesPerTextByte = 2.0;
// What the whole path of --state takes for each byte of a document (measured: 4.3 for a
// generated alloc of 1M accounts and 10M slots, 500 MB, the file's mapping counted).
constexpr double kStateRootBytesPerTextByte = 4.5;

// The vector files named: files as given, folders walked for *.json in name order.
Result<std::vector<std::string>> vector_files(const std::vector<std::string>& args) {
    namespace fs = std::filesystem;
    std::vector<std::string> out;
    for (const std::string& a : args) {
        std::error_code ec;
        if (!fs::is_directory(a, ec)) {
            out.push_back(a);
            continue;
        }
        std::vector<std::string> found;
        for (auto it = fs::recursive_directory_iterator(a, ec);
             !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
            if (it->path().extension() == ".json" && it->is_regular_file(ec)) {
                found.push_back(it->path().string());
            }
        }
        if (ec) return Error{Errc::bad_input, a + ": " + ec.message()};
        std::sort(found.begin(), found.end());
        out.insert(out.end(), found.begin(), found.end());
    }
    return out;
}

int run_vectors(const RootOptions& o) {
    auto files = vector_files(o.inputs);
    if (!files) return report(files.error());
    size_t passed = 0, failed = 0, skipped = 0;
    ojson cases = ojson::array();
    std::string out;
    ProgressLine progress("root", "vectors", /*streamed=*/true);
    progress.count("files");
    for (const std::string& file : *files) {
        progress.set(static_cast<uint64_t>(&file - files->data()), files->size());
        auto run = run_vector_file(file);
        if (!run) return report(run.error());
        skipped += run->skipped;
        for (const VectorCase& c : run->cases) {
            (c.passed ? passed : failed) += 1;
            if (o.json) {
                nlohmann::ordered_json one = {{"name", c.name}, {"passed", c.passed}};
                if (!c.passed) one["detail"] = c.detail;  // why it failed; a pass has none
                cases.push_back(std::move(one));
            } else if (c.passed) {
                out += "ok   " + c.name + "\n";
            } else {
                out += "FAIL " + c.name + ": " + c.detail + "\n";
            }
        }
        if (out.size() >= 65536) {
            fmt::print("{}", out);
            out.clear();
        }
    }
    progress.stop();
    if (o.json) {
        ojson doc{{"cases", cases}, {"passed", passed}, {"failed", failed}};
        if (skipped != 0) doc["skipped"] = skipped;
        fmt::print("{}\n", doc.dump());
    } else {
        if (skipped != 0) {
            out +=
                fmt::format("{} skipped (postStateHash only: no postState to compute)\n", skipped);
        }
        fmt::print("{}{} passed, {} failed\n", out, passed, failed);
    }
    return failed == 0 ? kOk : kNegative;
}

// One input's answer: its root and its --json object; code is its exit status.
struct Answer {
    Hash256 root{};
    ojson json;
    int code = kOk;
    std::string note;                                    // a negative answer's reason, for stderr
    std::optional<uint64_t> input_bytes = std::nullopt;  // --stats: the bytes read, when known
};

std::optional<Answer> kv_answer(const RootOptions& o, const std::string& path, int& code,
                                ProgressLine& progress) {
    if (path != "-" && looks_like_sqlite(path)) {
        if (o.secure) {
            code = report_usage("root: --secure applies to key/value input, not to a trie file");
            return std::nullopt;
        }
        if (o.threads != 0) {
            code = report_usage("root: --threads applies to key/value input, not to a trie file");
            return std::nullopt;
        }
        auto t = open_trie(path, o.trie);
        if (!t) {
            code = report(t.error());
            return std::nullopt;
        }
        if (auto v = verify_root_row(*t); !v) {
            code = report(v.error());
            return std::nullopt;
        }
        // One shape for both kinds of input: the trie a trie file answered from, the keys a
        // key/value file held (a trie file's count would take a walk of every leaf).
        return Answer{
            t->info.root,
            ojson{{"root", to_hex(t->info.root)}, {"trie", t->info.name}, {"keys", nullptr}},
            kOk,
            {}};
    }
    if (o.trie_given) {
        // --trie says the input is meant as a trie file: an empty or damaged one is a storage
        // error about the file, not a usage error about key/value input. JSON input is
        // key/value input, which takes no --trie.
        if (path != "-" && sniff_kv_file(path) == nullptr) {
            auto t = open_trie(path, o.trie);
            if (!t) {
                code = report(t.error());
                return std::nullopt;
            }
        }
        code = report_usage("root: --trie applies to a trie file, not to key/value input");
        return std::nullopt;
    }
    // An empty file is key/value input of no pairs (what `mpt dump` prints of an empty trie),
    // so its root is the empty root; said on stderr, for a file meant as a trie file.
    if (struct stat st{}; path != "-" && !quiet() && ::stat(path.c_str(), &st) == 0 &&
                          S_ISREG(st.st_mode) && st.st_size == 0) {
        eprint("mpt: note: {}\n", printable(path + ": an empty file, read as no key/value pairs "
                                                   "(the empty root)"));
    }
    // A document larger than the memory budget allows to hold whole is sorted in runs that
    // spill to temporary files (kv_root.hpp).
    const KvMemoryPlan plan =
        plan_kv_memory(o.memory.budget(), kRootBytesPerTextByte, 0.5, o.memory.tmp_dir(),
                       o.threads != 0 ? o.threads : available_cpus(), regular_file_bytes(path));
    auto source = open_text_source(path, plan.whole_limit, plan.piece_bytes, plan.max_entry_bytes,
                                   o.memory.max_input);
    if (!source) {
        code = report(source.error());
        return std::nullopt;
    }
    if (source->stream) {
        // With a second thread, the next piece is parsed, in halves, while this one sorts the
        // last.
        const bool threaded = (o.threads != 0 ? o.threads : available_cpus()) > 1;
        KvStreamReader reader(std::move(source->stream));
        reader.read_ahead(threaded);
        reader.parse_halves(threaded);
        progress.phase(path + ": reading and sorting, past --memory");
        // On threads, each nibble's file is emptied as soon as its part is hashed.
        SpillOptions spill = plan.spill;
        spill.file_per_nibble = threaded;
        // The buckets' first chunks held in memory, never written, where the writes would wait
        // for the disk.
        spill.hold_bytes = spill_hold_bytes(plan, o.memory.budget());
        SpillFiles files(spill);
        SpillingPairSorter sorter(files);
        Result<KvRoot> root = [&]() -> Result<KvRoot> {
            MPT_RETURN_IF_ERROR(sort_kv_stream(reader, o.secure, false, sorter));
            return kv_root_sorted(sorter, o.threads != 0 ? o.threads : available_cpus());
        }();
        if (!root) {
            code = report(root.error(), path);
            return std::nullopt;
        }
        return Answer{root->root,
                      ojson{{"root", to_hex(root->root)},
                            {"trie", nullptr},
                            {"keys", root->pairs},
                            {"tempFiles", files.files_made()},
                            {"tempBytes", files.bytes_written()}},
                      kOk,
                      {},
                      reader.bytes_read()};
    }
    const unsigned threads = o.threads != 0 ? o.threads : available_cpus();
    InputText* text = &source->whole;
    const uint64_t input_bytes = text->view().size();
    Result<KvInput> input = Errc::internal;
    progress.phase(path + ": reading");
    {
        const SigbusGuard guard(path);  // the file is mapped while it is parsed
        input = parse_kv(text->view(), threads);
    }
    if (!input) {
        code = report(input.error(), path);
        return std::nullopt;
    }
    *text = InputText();  // the pairs live in the input's own arena
    progress.phase(fmt::format("{}: hashing {} pairs", path, input->size()));
    auto root = kv_root(*input, o.secure, threads);
    if (!root) {
        code = report(root.error(), path);
        return std::nullopt;
    }
    return Answer{root->root,
                  ojson{{"root", to_hex(root->root)}, {"trie", nullptr}, {"keys", root->pairs}},
                  kOk,
                  {},
                  input_bytes};
}

// A dump's own root against the computed one: kNegative and a note when they differ.
void check_claimed_root(Answer& a, const std::optional<Hash256>& claimed, const Hash256& root) {
    if (!claimed) return;
    const bool matched = *claimed == root;
    a.json["claimedRoot"] = to_hex(*claimed);
    a.json["matched"] = matched;
    if (!matched) {
        a.code = kNegative;
        a.note = "the document gives root " + to_hex(*claimed) + ", computed " + to_hex(root);
    }
}

std::optional<Answer> state_answer(const RootOptions& o, const std::string& path, int& code,
                                   ProgressLine& progress) {
    const unsigned threads = o.threads != 0 ? o.threads : available_cpus();
    // A document larger than the memory budget allows to hold whole is read as a stream and
    // sorted in runs that spill to temporary files (state_spill.hpp).
    const KvMemoryPlan plan = plan_kv_memory(o.memory.budget(), kStateRootBytesPerTextByte, 0.5,
                                             o.memory.tmp_dir(), threads, regular_file_bytes(path));
    auto source = open_text_source(path, plan.whole_limit, plan.piece_bytes, plan.max_entry_bytes,
                                   o.memory.max_input);
    if (!source) {
        code = report(source.error(), path);
        return std::nullopt;
    }
    if (source->stream) {
        progress.phase(path + ": reading and sorting, past --memory");
        auto r = streamed_state_root(*source->stream, plan.spill, threads);
        if (!r) {
            code = report(r.error(), path);
            return std::nullopt;
        }
        const StateRootInfo& info = r->info;
        Answer a{info.root,
                 ojson{{"root", to_hex(info.root)},
                       {"shape", state_shape_name(r->doc.shape)},
                       {"accounts", info.accounts},
                       {"slots", info.storage_slots},
                       {"tries", 1 + info.storage_tries}},
                 kOk,
                 {}};
        check_claimed_root(a, r->doc.claimed_root, info.root);
        a.json["tempFiles"] = r->doc.temp_files;
        a.json["tempBytes"] = r->doc.temp_bytes;
        // Read through to its end: a regular file's size (a stream's is not kept).
        std::error_code ec;
        if (const auto size = std::filesystem::file_size(path, ec); path != "-" && !ec) {
            a.input_bytes = size;
        }
        return a;
    }
    Result<StateDoc> doc = Errc::internal;
    const uint64_t input_bytes = source->whole.view().size();
    progress.phase(path + ": reading");
    {
        const SigbusGuard guard(path);  // the file is mapped while it is parsed
        doc = parse_state_document(source->whole.view(), threads);
    }
    source->whole = InputText();
    if (!doc) {
        code = report(doc.error(), path);
        return std::nullopt;
    }
    progress.phase(fmt::format("{}: hashing {} accounts", path, doc->accounts.size()));
    auto info = state_root_info(*doc, threads);
    if (!info) {
        code = report(info.error(), path);
        return std::nullopt;
    }
    Answer a{info->root,
             ojson{{"root", to_hex(info->root)},
                   {"shape", state_shape_name(doc->shape)},
                   {"accounts", info->accounts},
                   {"slots", info->storage_slots},
                   {"tries", 1 + info->storage_tries}},
             kOk,
             {},
             input_bytes};
    check_claimed_root(a, doc->claimed_root, info->root);
    return a;
}

// --stats of one input, from the hashing counts and the clock before and after it.
struct StatsMark {
    KeccakCounts counts = keccak_counts();
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

ojson stats_json(const StatsMark& mark, const Answer& a, unsigned threads) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - mark.start).count();
    const KeccakCounts now = keccak_counts();
    ojson s{{"inputBytes", nullptr},
            {"threads", threads},
            {"keccak", keccak256_batch_kernel().name},
            {"hashes", now.hashes - mark.counts.hashes},
            {"hashedBytes", now.bytes - mark.counts.bytes},
            {"permutations", now.permutations - mark.counts.permutations},
            {"seconds", std::round(seconds * 1e6) / 1e6}};
    if (a.input_bytes) s["inputBytes"] = *a.input_bytes;
    return s;
}

// The text form of --stats, one line on stderr.
void print_stats(const std::string& path, const ojson& s) {
    const std::string input = s["inputBytes"].is_null() ? std::string("?") : s["inputBytes"].dump();
    eprint(
        "mpt: stats: {}: read {} bytes; hashed {} inputs, {} bytes, {} permutations (keccak "
        "{}, threads {}); {:.3f} s\n",
        printable(path), input, s["hashes"].get<uint64_t>(), s["hashedBytes"].get<uint64_t>(),
        s["permutations"].get<uint64_t>(), s["keccak"].get<std::string>(),
        s["threads"].get<unsigned>(), s["seconds"].get<double>());
}

int run_roots(const RootOptions& o, const std::vector<std::string>& inputs, bool state) {
    const bool several = inputs.size() > 1;
    int status = kOk;
    ojson all = ojson::array();
    for (const std::string& path : inputs) {
        int code = kOk;
        // A state document is told by its shape; --secure and --trie say key/value input.
        const bool as_state = state || (!o.secure && !o.trie_given && file_looks_like_state(path));
        std::optional<Answer> a;
        std::optional<StatsMark> mark;  // --stats: the counts and clock before this input
        if (o.stats) mark.emplace();
        {
            ProgressLine progress("root", path);
            a = as_state ? state_answer(o, path, code, progress)
                         : kv_answer(o, path, code, progress);
        }
        if (a && o.stats) {
            ojson s = stats_json(*mark, *a, o.threads != 0 ? o.threads : available_cpus());
            if (!quiet()) print_stats(path, s);
            if (o.json) a->json["stats"] = std::move(s);
        }
        if (!a) {
            // Reported; the other inputs still run, as sha256sum's do.
            status = std::max(status, code);
            continue;
        }
        status = std::max(status, a->code);
        if (o.json) {
            if (several) {
                ojson j{{"file", path}};
                for (auto& [k, v] : a->json.items()) j[k] = v;
                all.push_back(std::move(j));
            } else {
                fmt::print("{}\n", a->json.dump());
            }
        } else if (several) {
            // sha256sum's layout: the root, two spaces, the file.
            fmt::print("{}  {}\n", to_hex(a->root), path);
        } else {
            fmt::print("{}\n", to_hex(a->root));
        }
        if (!a->note.empty() && !quiet()) {
            std::fflush(stdout);
            eprint("mpt: root mismatch: {}\n", printable(path + ": " + a->note));
        }
    }
    if (o.json && several) fmt::print("{}\n", all.dump());
    return status;
}

int run_root(const RootOptions& o) {
    // Standard input reads once: a second - would be an empty input.
    if (std::count(o.inputs.begin(), o.inputs.end(), "-") > 1) {
        return report_usage("root: - (standard input) given twice");
    }
    if (o.memory.given() && (o.list || o.block || o.vectors)) {
        return report_usage(
            "root: --memory, --tmp and --max-input apply to key/value input and --state");
    }
    if (o.stats && (o.list || o.block || o.vectors)) {
        return report_usage("root: --stats applies to key/value input and --state");
    }
    // Counted from here on: every hash this command does is one of its answers'.
    if (o.stats) keccak_counting(true);
    if (o.list || o.block) {
        const bool other = o.vectors || o.state || o.secure || o.threads != 0 || o.trie_given;
        return run_root_list_or_block(o.list, o.block, o.inputs, other, o.json);
    }
    if (o.vectors) {
        if (o.inputs.empty()) {
            return report_usage(
                "root: --vectors needs INPUT (ethereum/tests files, or folders of *.json)");
        }
        if (o.state) return report_usage("root: --state does not go with --vectors");
        // A TrieTests file says by its name whether its keys are hashed (*secure*).
        if (o.secure) {
            return report_usage(
                "root: --secure does not go with --vectors (a file named *secure* hashes keys)");
        }
        if (o.trie_given) return report_usage("root: --trie applies to a trie file");
        return run_vectors(o);
    }
    if (o.state) {
        if (o.inputs.empty()) {
            return report_usage("root: --state needs INPUT (a state document, or - for stdin)");
        }
        if (o.secure) return report_usage("root: --secure applies to key/value input");
        if (o.trie_given) return report_usage("root: --trie applies to a trie file");
        return run_roots(o, o.inputs, true);
    }
    if (o.inputs.empty())
        return report_usage("root: INPUT is required (a key/value file, or - for stdin)");
    return run_roots(o, o.inputs, false);
}

}  // namespace

void register_root(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<RootOptions>();
    sub->add_option(
        "input", o->inputs,
        "Key/value files (JSON or text dumps; - for stdin) or trie files; with several, one line "
        "each: 0x<root>  <file>");
    CLI::Option* trie = sub->add_option("--trie", o->trie, "Trie name, when INPUT is a trie file")
                            ->capture_default_str();
    sub->add_flag("--state", o->state,
                  "INPUT is state documents (genesis.json, alloc, geth or reth dump; - for "
                  "stdin): print their state roots");
    sub->add_flag("--vectors", o->vectors,
                  "INPUT is ethereum/tests TrieTests or BlockchainTests files, or folders of "
                  "*.json: run them");
    sub->add_flag("--list", o->list,
                  "INPUT is a JSON array of 0x items (encoded transactions, receipts, "
                  "withdrawals) or of their JSON objects (- for stdin), or a JSON-RPC answer "
                  "holding one (debug_getRawReceipts, eth_getBlockReceipts): the root of "
                  "rlp(index) -> item");
    sub->add_flag("--block", o->block,
                  "INPUT is a block (its RLP, hex or binary; debug_getRawBlock's answer; "
                  "eth_getBlockByNumber's with full transactions; a BlockchainTests block) and, "
                  "if given, its receipts as --list reads them: the header's roots beside the "
                  "body's; exit 1 on a difference");
    sub->add_flag("--secure", o->secure, "Hash every key with keccak256 (a secure trie)");
    sub->add_flag("--json", o->json, "Print one JSON document");
    sub->add_flag("--stats", o->stats,
                  "Also print, on stderr and as \"stats\" in --json, the bytes read, the hashes, "
                  "their bytes and Keccak-f permutations, and the seconds taken");
    sub->add_option("--threads", o->threads,
                    "Threads for parsing and hashing a key/value file or state document "
                    "(default: the CPUs available)")
        ->check(CLI::Range(1u, 1024u));
    add_kv_memory_flags(sub, o->memory);
    sub->footer(
        "Input: a JSON object {\"key\": \"value\"} or an array of pairs [[\"key\", \"value\"], "
        "...]\n"
        "applied in order, where null or \"\" deletes. A 0x string is hex; any other string is\n"
        "its UTF-8 bytes. State documents: see mpt-root(1).");
    sub->final_callback([o, trie, &runner] {
        o->trie_given = trie->count() > 0;
        runner = [o] { return run_root(*o); };
    });
}

}  // namespace mpt::cli
