# ft_embed(<output.c> [BASE <dir>] FILES <file>...): generate a C file that holds each file's
# bytes, so the binaries need no template files at run time. The table it defines is declared in
# generator/gen_embedded_internal.h; lookup is by the path below BASE ("common/ft_types.cuh"),
# or by base name when no BASE is given.
function(ft_embed output)
  cmake_parse_arguments(ARG "" "BASE" "FILES" ${ARGN})
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${output} "-DBASE=${ARG_BASE}" "-DFILES=${ARG_FILES}"
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_run.cmake
    DEPENDS ${ARG_FILES} ${PROJECT_SOURCE_DIR}/cmake/embed_run.cmake
    COMMENT "Embedding ${CMAKE_CURRENT_SOURCE_DIR} templates"
    VERBATIM)
endfunction()
