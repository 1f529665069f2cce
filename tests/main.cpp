// The unit tests' main: doctest's, plus one rule. ctest runs each case alone, selected by
// name (`mpt_tests --test-case=<name>`, CMakeLists.txt); a run whose filters select no case at
// all fails, so that a name the filter cannot match is a failed test, not an empty pass.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

namespace {

// What the last test run selected; a listener sees every run, whatever the reporter.
unsigned g_selected = 0;
bool g_ran = false;

struct SelectedCount : doctest::IReporter {
    explicit SelectedCount(const doctest::ContextOptions& /*options*/) {}
    void report_query(const doctest::QueryData& /*data*/) override {}
    void test_run_start() override {}
    void test_run_end(const doctest::TestRunStats& stats) override {
        g_ran = true;
        g_selected = stats.numTestCasesPassingFilters;
    }
    void test_case_start(const doctest::TestCaseData& /*data*/) override {}
    void test_case_reenter(const doctest::TestCaseData& /*data*/) override {}
    void test_case_end(const doctest::CurrentTestCaseStats& /*stats*/) override {}
    void test_case_exception(const doctest::TestCaseException& /*e*/) override {}
    void subcase_start(const doctest::SubcaseSignature& /*signature*/) override {}
    void subcase_end() override {}
    void log_assert(const doctest::AssertData& /*data*/) override {}
    void log_message(const doctest::MessageData& /*data*/) override {}
    void test_case_skipped(const doctest::TestCaseData& /*data*/) override {}
};

REGISTER_LISTENER("selected_count", 1, SelectedCount);

}  // namespace

int main(int argc, char** argv) {
    doctest::Context context(argc, argv);
    const int result = context.run();
    if (context.shouldExit()) return result;  // --help, --list-test-cases, ...
    if (g_ran && g_selected == 0) {
        // ctest's discovery (CMakeLists.txt) cuts a case name at each ';'.
        std::fprintf(stderr,
                     "mpt_tests: error: no test case matches the filters given (a ';' in a "
                     "case name breaks ctest's discovery)\n");
        return 1;
    }
    return result;
}
