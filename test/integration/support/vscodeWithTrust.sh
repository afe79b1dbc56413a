#!/bin/sh
# For the untrusted window on a desktop VS Code: @vscode/test-electron's runTests always
# passes --disable-workspace-trust; this runs $BATON_VSCODE_EXECUTABLE with every other
# argument. (The code-server launcher drops it itself when BATON_LAUNCHER_TRUST=1.)
for arg do
  shift
  [ "$arg" = "--disable-workspace-trust" ] && continue
  set -- "$@" "$arg"
done
exec "$BATON_VSCODE_EXECUTABLE" "$@"
