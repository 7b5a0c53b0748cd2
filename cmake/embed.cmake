# ft_embed(<output.c> FILES <file>...): generate a C file that holds each file's bytes, so the
# binaries need no template files at run time. The table it defines is declared in
# generator/gen_embedded_internal.h; lookup is by base name ("fwd_mma.cu").
function(ft_embed output)
  cmake_parse_arguments(ARG "" "" "FILES" ${ARGN})
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${output} "-DFILES=${ARG_FILES}"
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_run.cmake
    DEPENDS ${ARG_FILES} ${PROJECT_SOURCE_DIR}/cmake/embed_run.cmake
    COMMENT "Embedding ${CMAKE_CURRENT_SOURCE_DIR} templates"
    VERBATIM)
endfunction()
