#!/usr/bin/env bash
# Adds Timothy to the desktop's application menu (for the current user), wherever this
# unpacked Timothy folder lives. Run it again after moving the folder; --remove takes it out.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
applications=${XDG_DATA_HOME:-$HOME/.local/share}/applications
entry="$applications/timothy.desktop"

if [ "${1:-}" = "--remove" ]; then
  rm -f "$entry"
  echo "removed $entry"
  exit 0
fi

[ -x "$here/timothy" ] || { echo "install-desktop-entry: no timothy executable in $here" >&2; exit 2; }
mkdir -p "$applications"
cat > "$entry" <<ENTRY
[Desktop Entry]
Type=Application
Name=Timothy
GenericName=AI assistant
Comment=A desktop AI assistant whose long-term memory belongs to you
Exec="$here/timothy"
Icon=$here/_internal/resources/icons/timothy.png
Terminal=false
Categories=Utility;Office;
StartupWMClass=timothy
ENTRY
if command -v update-desktop-database >/dev/null; then
  update-desktop-database "$applications" || true
fi
echo "added $entry"
