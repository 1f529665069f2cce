# Read by ctest (TEST_INCLUDE_FILES, through the build's cli_ctest.cmake, which sets the
# MPT_CLI_* paths): the ctest entries of the CLI cases, cli/<group> and
# cli/<group>/<case name> (tests/cli_test.sh --ctest). Listing takes seconds, so the cases
# are listed again only when a case file, the runner or the README is newer than the last
# listing, or the binary's commands (some case names come from them) are not those it was
# listed with. A listing that fails is one failing entry, cli/listing, saying why.
set(_cli_list "${MPT_CLI_DIR}/cases.cmake")
set(_cli_stale FALSE)
execute_process(COMMAND "${MPT_CLI_BIN}" --commands OUTPUT_VARIABLE _cli_commands
                ERROR_QUIET RESULT_VARIABLE _cli_commands_rc)
if(NOT _cli_commands_rc EQUAL 0)
    set(_cli_commands "")
endif()
if(NOT EXISTS "${_cli_list}" OR NOT EXISTS "${MPT_CLI_DIR}/commands.txt")
    set(_cli_stale TRUE)
else()
    file(READ "${MPT_CLI_DIR}/commands.txt" _cli_listed_commands)
    if(NOT _cli_listed_commands STREQUAL _cli_commands)
        set(_cli_stale TRUE)
    endif()
    file(GLOB _cli_inputs "${MPT_CLI_SRC}/tests/*_cases.sh")
    list(APPEND _cli_inputs "${MPT_CLI_SRC}/tests/cli_test.sh" "${MPT_CLI_SRC}/tests/expect.sh"
         "${MPT_CLI_SRC}/README.md")
    foreach(_cli_input IN LISTS _cli_inputs)
        if("${_cli_input}" IS_NEWER_THAN "${_cli_list}")
            set(_cli_stale TRUE)
        endif()
    endforeach()
endif()
set(_cli_rc 0)
if(_cli_stale)
    file(REMOVE "${_cli_list}")
    execute_process(
        COMMAND bash "${MPT_CLI_SRC}/tests/cli_test.sh" --ctest "${MPT_CLI_DIR}" "${MPT_CLI_BIN}"
                "${MPT_CLI_SRC}/fixtures" "${MPT_CLI_GEN}" ${MPT_CLI_ETHEREUM_TESTS}
        RESULT_VARIABLE _cli_rc
        ERROR_VARIABLE _cli_err)
endif()
if(_cli_stale AND _cli_rc EQUAL 0)
    file(WRITE "${MPT_CLI_DIR}/commands.txt" "${_cli_commands}")
endif()
if(_cli_rc EQUAL 0 AND EXISTS "${_cli_list}")
    include("${_cli_list}")
else()
    add_test(cli/listing "${CMAKE_COMMAND}" -E echo "listing the CLI cases failed: ${_cli_err}")
    set_tests_properties(cli/listing PROPERTIES WILL_FAIL TRUE)
endif()
