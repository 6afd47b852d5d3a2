// Built when KANOKO_SCENE=OFF: the commands exist and say why they cannot run.
#include <iostream>

#include "src/cli/commands.hpp"

namespace kanoko::cli {

int cmd_render(const Args& /*args*/) {
  std::cerr << "kanoko render: this build has no OpenSceneGraph scene (configured with "
               "-DKANOKO_SCENE=OFF); rebuild with the scene enabled\n";
  return 2;
}

int cmd_view(const Args& /*args*/) {
  std::cerr << "kanoko view: this build has no OpenSceneGraph scene (configured with "
               "-DKANOKO_SCENE=OFF); rebuild with the scene enabled\n";
  return 2;
}

}  // namespace kanoko::cli
