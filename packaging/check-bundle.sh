#!/usr/bin/env bash
# Runs the frozen bundle as a machine with no Python would: no Python on PATH, no PYTHONPATH,
# no network, a fresh home and data folder, an offscreen screen, and a real Secret Service
# (gnome-keyring in its own D-Bus session, unlocked) as a desktop session would give it.
#
#   packaging/check-bundle.sh [dist/Timothy]
#
# Needs (Debian/Ubuntu): util-linux (unshare), dbus-daemon (dbus-run-session), gnome-keyring;
# with xvfb and xauth it also starts the app on a virtual X screen.
set -euo pipefail

if [ "${1:-}" = "--inside" ]; then
  # Second half, inside the network namespace and the private D-Bus session.
  bundle=$2
  work=$3
  passed=0
  failures=0
  step() { printf '\n== %s\n' "$1"; }
  ok() { printf 'ok    %s\n' "$1"; passed=$((passed + 1)); }
  bad() { printf 'FAIL  %s\n' "$1"; failures=$((failures + 1)); }

  # The bundle's own PATH: an empty folder, so nothing it runs can be a Python.
  nopython="$work/empty-path"
  mkdir -p "$nopython"
  timothy() {
    timeout 120 env -u PYTHONPATH -u PYTHONHOME -u VIRTUAL_ENV PATH="$nopython" \
      QT_QPA_PLATFORM=offscreen TIMOTHY_DATA_DIR="$data" "$bundle/timothy" "$@"
  }

  step "the sandbox"
  if PATH="$nopython" command -v python3 python >/dev/null 2>&1; then
    bad "a Python is reachable on the bundle's PATH"
  else
    ok "no Python on PATH ($nopython), PYTHONPATH unset"
  fi
  # /proc/net belongs to this network namespace (/sys/class/net would show the host's).
  interfaces=$(awk -F: 'NR > 2 { gsub(/ /, "", $1); print $1 }' /proc/net/dev | tr '\n' ' ')
  routes=$(awk 'NR > 1' /proc/net/route | wc -l)
  if [ "$interfaces" = "lo " ] && [ "$routes" -eq 0 ]; then
    ok "network namespace with only a loopback interface and no route"
  else
    bad "network is reachable (interfaces: $interfaces; routes: $routes)"
  fi

  # An unlocked login keyring, created under the throwaway HOME: what a desktop session has.
  printf 'check-bundle' | gnome-keyring-daemon --unlock --components=secrets >/dev/null

  step "timothy --version"
  data="$work/data-version"
  if timothy --version; then ok "--version"; else bad "--version"; fi

  step "timothy --self-check (fresh data folder)"
  data="$work/data-self-check"
  if timothy --self-check; then ok "self-check passed"; else bad "self-check"; fi

  step "the app starts offscreen and quits by itself (TIMOTHY_QUIT_AFTER_MS)"
  data="$work/data"
  if TIMOTHY_QUIT_AFTER_MS=1500 timothy; then ok "app exited cleanly"; else bad "app exit code $?"; fi
  if [ -f "$data/timothy.db" ]; then ok "the app created its store: $data/timothy.db"; else bad "no store in $data"; fi

  if command -v xvfb-run >/dev/null; then
    step "on a real X server (Xvfb), through the xcb platform plugin"
    data="$work/data-x11"
    on_x11() {
      xvfb-run --auto-servernum timeout 120 env -u PYTHONPATH -u PYTHONHOME -u QT_QPA_PLATFORM \
        PATH="$nopython" TIMOTHY_DATA_DIR="$data" "$bundle/timothy" "$@"
    }
    if on_x11 --self-check | tee "$work/x11-check.txt" | grep '^ok    Qt window: platform xcb$' >/dev/null; then
      ok "self-check chose xcb and showed a window"
    else
      cat "$work/x11-check.txt"
      bad "self-check on xcb"
    fi
    if TIMOTHY_QUIT_AFTER_MS=1500 on_x11; then ok "app exited cleanly on xcb"; else bad "app on xcb"; fi
  fi

  step "store and recall a memory through the CLI"
  fact="I prefer aisle seats on long flights"
  added=$(timothy memories add "$fact" --type preference --entity Zoë) || bad "memories add"
  echo "$added"
  found=$(timothy recall "which seat do I like on a plane?") || bad "recall"
  echo "$found"
  if grep -qF "$fact" <<<"$found"; then ok "recalled: $fact"; else bad "the memory was not found"; fi

  if [ -x "$bundle/install-desktop-entry.sh" ]; then
    step "the desktop entry (install-desktop-entry.sh, shipped in the archive)"
    "$bundle/install-desktop-entry.sh"
    entry="$HOME/.local/share/applications/timothy.desktop"
    if grep -qxF "Exec=\"$bundle/timothy\"" "$entry" && grep -q '^Icon=/' "$entry" &&
      [ -f "$(sed -n 's/^Icon=//p' "$entry")" ]; then
      ok "desktop entry points at this bundle and its icon"
    else
      bad "desktop entry"
    fi
    "$bundle/install-desktop-entry.sh" --remove >/dev/null
  fi

  step "nothing landed outside the chosen folders"
  if [ -e "$HOME/.local/share/Timothy" ]; then
    bad "the default data folder was created: $HOME/.local/share/Timothy"
  else
    ok "the default data folder was never touched"
  fi

  printf '\nbundle: %d passed, %d failed\n' "$passed" "$failures"
  [ "$failures" -eq 0 ]
  exit
fi

bundle=$(cd "${1:-dist/Timothy}" && pwd)
[ -x "$bundle/timothy" ] || { echo "check-bundle: no executable at $bundle/timothy" >&2; exit 2; }
for tool in unshare dbus-run-session gnome-keyring-daemon timeout; do
  command -v "$tool" >/dev/null || {
    echo "check-bundle: $tool is missing (apt-get install util-linux dbus-daemon gnome-keyring)" >&2
    exit 2
  }
done

# Every Qt library the bundle carries must find the libraries it links to inside the bundle:
# build.spec cuts plugins and the libraries only they need, and this proves it cut no more.
unresolved=$(
  find "$bundle/_internal" -name '*.so*' -type f -print0 |
    LD_LIBRARY_PATH="$bundle/_internal" xargs -0 -n 20 ldd 2>/dev/null |
    grep 'not found' | grep -E 'libQt6|libpyside|libshiboken|libicu' | sort -u || true
)
if [ -n "$unresolved" ]; then
  echo "check-bundle: bundled libraries link to Qt libraries the bundle lacks:" >&2
  echo "$unresolved" >&2
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/timothy-check-bundle.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home"

# A new network namespace has only a loopback interface, down: nothing can leave the machine.
# As root plain `unshare --net` works; elsewhere a user namespace grants it.
if [ "$(id -u)" -eq 0 ]; then isolate=(unshare --net); else isolate=(unshare --map-root-user --net); fi

"${isolate[@]}" env -i HOME="$work/home" PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
  dbus-run-session -- bash "$0" --inside "$bundle" "$work" 2> >(grep -v 'Failed to set fd limit' >&2)
