#include "key_list.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace mpt::cli {

KeyList::~KeyList() {
    if (in_ != nullptr && in_ != stdin) std::fclose(in_);
    std::free(buf_);
}

Result<std::optional<std::string>> KeyList::next() {
    if (next_arg_ < args_.size()) return std::optional<std::string>(args_[next_arg_++]);
    if (!file_) return std::optional<std::string>{};
    if (!opened_) {
        opened_ = true;
        in_ = *file_ == "-" ? stdin : std::fopen(file_->c_str(), "rb");
        if (in_ == nullptr) return input_error(*file_, errno);
    }
    if (in_ == nullptr) return std::optional<std::string>{};
    errno = 0;
    ssize_t n = ::getline(&buf_, &cap_, in_);
    if (n < 0) {
        if (std::ferror(in_)) {
            return file_error(Errc::bad_input, *file_,
                              "line " + std::to_string(line_ + 1) + ": " + std::strerror(errno));
        }
        return std::optional<std::string>{};
    }
    ++line_;
    if (n > 0 && buf_[n - 1] == '\n') --n;
    if (n > 0 && buf_[n - 1] == '\r') --n;
    if (n == 0)
        return file_error(Errc::bad_input, *file_,
                          "line " + std::to_string(line_) + ": an empty line, not a key");
    return std::optional<std::string>(std::string(buf_, static_cast<size_t>(n)));
}

Error KeyList::locate(Error e) const {
    if (!file_ || line_ == 0) return e;
    e.file = *file_;
    e.detail = "line " + std::to_string(line_) + ": " + e.detail;
    return e;
}

}  // namespace mpt::cli
