// RecordingReader: a NodeReader that records every path it is asked for, in order, and
// answers from another reader. The floor benchmarks learn from it which rows a proof reads.
//
// Thread safety: an object is used by one thread at a time.
#pragma once

#include <mpt/trie/node_source.hpp>

#include <vector>

namespace mpt::bench {

class RecordingReader : public NodeReader {
public:
    RecordingReader(NodeReader& inner, std::vector<bytes>& paths) : inner_(inner), paths_(paths) {}
    Result<bytes_view> read(bytes_view path) override {
        paths_.emplace_back(path.begin(), path.end());
        return inner_.read(path);
    }

private:
    NodeReader& inner_;
    std::vector<bytes>& paths_;
};

}  // namespace mpt::bench
