# shrec.cmake — build a shrec shader cache as part of a CMake target.
#
#   include(path/to/shrec/build/shrec.cmake)
#   shrec_add_shader_cache(<target>
#       INPUT <dir>                 # game/shader directory (relative: to the current source dir)
#       OUTPUT <file.cpp>           # generated cache (relative: to the current binary dir);
#                                   # its header <stem>.h and <stem>.msvc.inc (the blobs for
#                                   # cl.exe, included only there) are written next to it
#       [TARGETS dxil spirv]        # DXC targets (default: both)
#       [DXC <libdxcompiler.so>]    # else $SHREC_DXC, else shrec's provisioned copy
#       [SHREC <exe or target>]     # else ${SHREC_EXECUTABLE}, else `shrec` on PATH
#       [EXTRA_ARGS ...]            # more `shrec build` options, e.g. --layout per-shader
#       [ALLOW_FAILURES])           # shaders shrec cannot build are reported (one `error:` line
#                                   # each) but do not fail the build; without it they do
#
# The cache is rebuilt when any file under INPUT changes, when a file is added to or removed
# from INPUT (the glob is re-checked at build time, CONFIGURE_DEPENDS), when the shrec
# executable or the DXC library changes, when the arguments change, or when a hook file named
# in EXTRA_ARGS changes (the `--prelude` file, any file under `--override-dir`, both in the
# `--opt value` and `--opt=value` forms). Otherwise the build
# tool considers it up to date and shrec does not run. shrec rewrites the .cpp / .h only when
# their bytes change (they are the rule's byproducts; a stamp file is its output), so a rerun that
# changes nothing recompiles nothing that includes them. The generated .cpp and .h are added to
# <target>, and their directory to its include path. Link libzstd into <target> yourself (and a
# SMOL-V decoder unless EXTRA_ARGS has `--spirv-encoding raw`: shrec-runtime-c's static library
# and include/shrec_runtime.h).
#
# shrec keeps its compiled artifacts in ${CMAKE_BINARY_DIR}/shrec-cache (unless EXTRA_ARGS has
# --cache-dir or --no-cache), so a rebuild after a change recompiles only the changed shaders.
#
# Without DXC, $SHREC_DXC or a copy provisioned earlier, the first build fetches DXC: `pip
# download` of a pinned, sha256-checked PyPI wheel holding libdxcompiler (about 35 MB), into
# ~/.cache/shrec/dxc (needs pip and the network once; pass DXC or set SHREC_DXC to avoid it). The command runs with USES_TERMINAL, so shrec's progress and errors reach the
# terminal as they happen (Ninja would otherwise buffer them until the command ends).

cmake_minimum_required(VERSION 3.18)

function(shrec_add_shader_cache target)
    cmake_parse_arguments(PARSE_ARGV 1 ARG "ALLOW_FAILURES" "INPUT;OUTPUT;DXC;SHREC" "TARGETS;EXTRA_ARGS")
    if(ARG_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "shrec_add_shader_cache: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
    endif()
    if(NOT TARGET "${target}")
        message(FATAL_ERROR "shrec_add_shader_cache: ${target} is not a target")
    endif()
    if(NOT ARG_INPUT OR NOT ARG_OUTPUT)
        message(FATAL_ERROR "shrec_add_shader_cache: INPUT <dir> and OUTPUT <file.cpp> are required")
    endif()

    # The shrec executable: a CMake target, a path, or found on PATH.
    if(NOT ARG_SHREC)
        if(SHREC_EXECUTABLE)
            set(ARG_SHREC "${SHREC_EXECUTABLE}")
        else()
            find_program(SHREC_EXECUTABLE shrec)
            if(NOT SHREC_EXECUTABLE)
                message(FATAL_ERROR "shrec_add_shader_cache: shrec not found; pass SHREC <path>, "
                    "set SHREC_EXECUTABLE, or put it on PATH (cargo install --path <shrec checkout>)")
            endif()
            set(ARG_SHREC "${SHREC_EXECUTABLE}")
        endif()
    endif()
    if(TARGET "${ARG_SHREC}")
        set(shrec_cmd "$<TARGET_FILE:${ARG_SHREC}>")
        set(shrec_dep "${ARG_SHREC}")
    else()
        get_filename_component(shrec_cmd "${ARG_SHREC}" ABSOLUTE)
        set(shrec_dep "${shrec_cmd}")
    endif()

    get_filename_component(input "${ARG_INPUT}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    get_filename_component(output "${ARG_OUTPUT}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
    get_filename_component(out_dir "${output}" DIRECTORY)
    get_filename_component(out_ext "${output}" LAST_EXT)
    if(NOT out_ext MATCHES "^\\.(cpp|cc|cxx)$")
        message(FATAL_ERROR "shrec_add_shader_cache: OUTPUT must end in .cpp, .cc or .cxx: ${output}")
    endif()
    get_filename_component(out_stem "${output}" NAME_WLE)
    set(header "${out_dir}/${out_stem}.h")
    file(MAKE_DIRECTORY "${out_dir}")

    # Every file under INPUT; CONFIGURE_DEPENDS re-globs at build time so added or removed files
    # trigger a rebuild too.
    if(IS_DIRECTORY "${input}")
        file(GLOB_RECURSE inputs CONFIGURE_DEPENDS LIST_DIRECTORIES false "${input}/*")
    elseif(EXISTS "${input}")
        set(inputs "${input}")
    else()
        message(FATAL_ERROR "shrec_add_shader_cache: INPUT ${input} does not exist")
    endif()

    set(args build "${input}" -o "${output}" -q)
    if(ARG_TARGETS)
        string(REPLACE ";" "," targets "${ARG_TARGETS}")
        list(APPEND args --targets "${targets}")
    endif()
    set(dxc_dep "")
    if(ARG_DXC)
        get_filename_component(dxc "${ARG_DXC}" ABSOLUTE)
        list(APPEND args --dxc "${dxc}")
        set(dxc_dep "${dxc}")
    endif()
    if(NOT "--cache-dir" IN_LIST ARG_EXTRA_ARGS AND NOT "--no-cache" IN_LIST ARG_EXTRA_ARGS)
        list(APPEND args --cache-dir "${CMAKE_BINARY_DIR}/shrec-cache")
    endif()
    if(ARG_ALLOW_FAILURES)
        list(APPEND args --allow-failures)
    endif()
    list(APPEND args ${ARG_EXTRA_ARGS})

    # Hook files the command reads: a changed prelude or override reruns shrec.
    set(hook_deps "")
    set(next_is "")
    foreach(arg IN LISTS ARG_EXTRA_ARGS)
        set(value "")
        if(next_is)
            set(value "${arg}")
        elseif(arg MATCHES "^--(prelude|override-dir)=(.*)$")
            set(next_is "${CMAKE_MATCH_1}")
            set(value "${CMAKE_MATCH_2}")
        endif()
        if(value)
            # shrec runs in the current binary dir (add_custom_command's default): relative paths are read from there.
            get_filename_component(value "${value}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
            if(next_is STREQUAL "prelude")
                list(APPEND hook_deps "${value}")
            else()
                file(GLOB_RECURSE override_files CONFIGURE_DEPENDS LIST_DIRECTORIES false "${value}/*")
                list(APPEND hook_deps ${override_files})
            endif()
            set(next_is "")
        elseif(arg STREQUAL "--prelude")
            set(next_is "prelude")
        elseif(arg STREQUAL "--override-dir")
            set(next_is "override-dir")
        endif()
    endforeach()

    # The command line, in a file that is rewritten only when it changes: a new argument list
    # reruns shrec with any generator.
    set(args_file "${out_dir}/${out_stem}.shrec-args")
    string(REPLACE ";" "\n" args_text "${shrec_cmd};${args}")
    file(CONFIGURE OUTPUT "${args_file}" CONTENT "${args_text}\n" @ONLY)

    file(RELATIVE_PATH shown "${CMAKE_BINARY_DIR}" "${output}")
    set(stamp "${out_dir}/${out_stem}.shrec-stamp")
    add_custom_command(
        OUTPUT "${stamp}"
        BYPRODUCTS "${output}" "${header}" "${out_dir}/${out_stem}.msvc.inc"
        COMMAND ${shrec_cmd} ${args}
        COMMAND "${CMAKE_COMMAND}" -E touch "${stamp}"
        DEPENDS ${inputs} ${shrec_dep} ${dxc_dep} ${hook_deps} "${args_file}"
        COMMENT "shrec: building shader cache ${shown} (DXC may be downloaded on first use)"
        USES_TERMINAL
        VERBATIM)
    target_sources(${target} PRIVATE "${stamp}" "${output}" "${header}")
    target_include_directories(${target} PRIVATE "${out_dir}")
endfunction()
