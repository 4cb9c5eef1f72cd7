# rcc_layer(NAME DIR dir [SUBDIRS sub...] [USES layer...] [LIBS lib...] [DEFINITIONS def...])
#
# One layer of the library: an object library rcc_NAME built from DIR/*.cc (and DIR/SUB/*.cc),
# which links the layers it USES. Its sources see only its own folder and the folders of the
# layers below it: the include path is a directory of the build tree holding one symbolic link per
# visible folder (layers/NAME/FOLDER -> the source folder), so `#include "p2p/engine.h"` in a
# layer that may not use p2p fails to compile ("No such file"). tests/layers checks that.
function(rcc_layer name)
  cmake_parse_arguments(ARG "" "DIR" "SUBDIRS;USES;LIBS;DEFINITIONS" ${ARGN})
  set(dir ${PROJECT_SOURCE_DIR}/${ARG_DIR})
  get_filename_component(folder ${dir} NAME)
  set(globs ${dir}/*.cc)
  foreach(sub ${ARG_SUBDIRS})
    list(APPEND globs ${dir}/${sub}/*.cc)
  endforeach()
  file(GLOB sources CONFIGURE_DEPENDS ${globs})

  # Visible: this folder and, transitively, the folders of the layers used.
  set(visible ${name})
  foreach(used ${ARG_USES})
    if(NOT TARGET rcc_${used})
      message(FATAL_ERROR "layer ${name} uses ${used}, which is not defined below it")
    endif()
    get_property(theirs GLOBAL PROPERTY RCC_LAYER_VISIBLE_${used})
    list(APPEND visible ${theirs})
  endforeach()
  list(REMOVE_DUPLICATES visible)
  set_property(GLOBAL PROPERTY RCC_LAYER_VISIBLE_${name} ${visible})
  set_property(GLOBAL PROPERTY RCC_LAYER_FOLDER_${name} ${folder})
  set_property(GLOBAL PROPERTY RCC_LAYER_DIR_${name} ${dir})
  set_property(GLOBAL APPEND PROPERTY RCC_LAYERS_DEFINED ${name})

  set(farm ${PROJECT_BINARY_DIR}/layers/${name})
  file(REMOVE_RECURSE ${farm})
  file(MAKE_DIRECTORY ${farm})
  foreach(layer ${visible})
    get_property(layer_folder GLOBAL PROPERTY RCC_LAYER_FOLDER_${layer})
    get_property(layer_dir GLOBAL PROPERTY RCC_LAYER_DIR_${layer})
    file(CREATE_LINK ${layer_dir} ${farm}/${layer_folder} SYMBOLIC)
  endforeach()

  add_library(rcc_${name} OBJECT ${sources})
  target_include_directories(rcc_${name} PRIVATE ${farm} PUBLIC ${PROJECT_SOURCE_DIR}/include)
  # Position-independent code makes every global function interposable, which stops the compiler
  # from inlining calls between the library's own functions (the small send path was a chain of
  # such calls). Internal functions are not exported; calls between exported C functions inside
  # the library (rcc_test waiting through rcc_wait) then bind locally, out of reach of a tool that
  # interposes the C API, which sees every call the application makes.
  target_compile_options(rcc_${name} PRIVATE -fno-semantic-interposition)
  target_compile_definitions(rcc_${name} PUBLIC ${ARG_DEFINITIONS})
  foreach(used ${ARG_USES})
    target_link_libraries(rcc_${name} PUBLIC rcc_${used})
  endforeach()
  target_link_libraries(rcc_${name} PUBLIC ${ARG_LIBS})
  set(RCC_LAYER_INCLUDE_${name} ${farm} PARENT_SCOPE)
endfunction()

# After the last layer: a farm that sees every folder (white-box tests), and the map tests/layers
# reads (one line per layer: name, folder, farm, then the layers it may see).
function(rcc_write_layer_map)
  get_property(layers GLOBAL PROPERTY RCC_LAYERS_DEFINED)
  set(all ${PROJECT_BINARY_DIR}/layers/all)
  file(REMOVE_RECURSE ${all})
  file(MAKE_DIRECTORY ${all})
  set(map "")
  foreach(layer ${layers})
    get_property(folder GLOBAL PROPERTY RCC_LAYER_FOLDER_${layer})
    get_property(dir GLOBAL PROPERTY RCC_LAYER_DIR_${layer})
    get_property(visible GLOBAL PROPERTY RCC_LAYER_VISIBLE_${layer})
    file(CREATE_LINK ${dir} ${all}/${folder} SYMBOLIC)
    string(REPLACE ";" " " visible_text "${visible}")
    string(APPEND map "${layer} ${folder} ${dir} ${PROJECT_BINARY_DIR}/layers/${layer} ${visible_text}\n")
  endforeach()
  file(WRITE ${PROJECT_BINARY_DIR}/layers/map.txt "${map}")
  set(RCC_ALL_LAYERS_INCLUDE ${all} PARENT_SCOPE)
endfunction()
