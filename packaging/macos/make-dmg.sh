#!/usr/bin/env bash
# Packs the macOS app bundle into a compressed disk image with an Applications shortcut.
#
#   packaging/macos/make-dmg.sh [dist/Timothy.app] [dist/Timothy-<version>-macos-<arch>.dmg]
#
# macOS only (hdiutil, ditto, codesign). `make dist` on macOS runs it. Unsigned by default;
# set SIGN_IDENTITY (a "Developer ID Application: ..." identity in the keychain) to sign with
# the hardened runtime, and NOTARY_PROFILE (made with `xcrun notarytool store-credentials`)
# as well to notarize and staple, so Gatekeeper opens it without a warning.
set -euo pipefail

[ "$(uname -s)" = Darwin ] || { echo "make-dmg: this needs macOS (hdiutil)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
app=${1:-dist/Timothy.app}
version=$(/usr/libexec/PlistBuddy -c "Print :CFBundleShortVersionString" "$app/Contents/Info.plist")
out=${2:-dist/Timothy-$version-macos-$(uname -m).dmg}
[ -d "$app" ] || { echo "make-dmg: no app bundle at $app; run make dist first" >&2; exit 2; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
ditto "$app" "$stage/Timothy.app"
ln -s /Applications "$stage/Applications"

if [ -n "${SIGN_IDENTITY:-}" ]; then
  codesign --force --deep --timestamp --options runtime \
    --entitlements "$here/entitlements.plist" --sign "$SIGN_IDENTITY" "$stage/Timothy.app"
  codesign --verify --deep --strict "$stage/Timothy.app"
fi

rm -f "$out"
hdiutil create -volname "Timothy" -srcfolder "$stage" -fs HFS+ -format UDZO \
  -imagekey zlib-level=9 "$out"

if [ -n "${SIGN_IDENTITY:-}" ] && [ -n "${NOTARY_PROFILE:-}" ]; then
  codesign --timestamp --sign "$SIGN_IDENTITY" "$out"
  xcrun notarytool submit "$out" --keychain-profile "$NOTARY_PROFILE" --wait
  xcrun stapler staple "$out"
fi

hdiutil verify "$out"
echo "wrote $out"
