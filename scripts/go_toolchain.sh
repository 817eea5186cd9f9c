#!/usr/bin/env bash
# Prints a directory to put first on PATH so that `go` is at least the version GO_MOD asks for
# (its `toolchain` line, else its `go` line); prints nothing when the go on PATH will do.
#   usage: scripts/go_toolchain.sh GO_MOD CACHE_DIR
# Go >= 1.21 switches to the toolchain go.mod asks for by itself (GOTOOLCHAIN=auto, the default).
# An older go command (Debian 12 ships 1.19) predates that mechanism, so this fetches the same
# module GOTOOLCHAIN=auto would (golang.org/toolchain from the Go module proxy, checksum-verified
# by `go mod download`) and unpacks it into CACHE_DIR/go<version>. KBT_FORCE_GO_TOOLCHAIN=1 takes
# that path whatever the go on PATH is (for tests).
set -euo pipefail
go_mod=$1
cache=$2
log() { printf 'install: %s\n' "$*" >&2; }

want=$(awk '$1 == "toolchain" {sub(/^go/, "", $2); t = $2} $1 == "go" {g = $2} END {print (t != "" ? t : g)}' "$go_mod")
have=$(go env GOVERSION 2>/dev/null | sed 's/^go//; s/[^0-9.].*//' || true)
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]; }
if [ "${KBT_FORCE_GO_TOOLCHAIN:-0}" != 1 ] && version_ge "${have:-0}" 1.21; then
  exit 0
fi
root="$cache/go$want"
if [ -x "$root/bin/go" ] && [ -f "$root/.complete" ]; then
  echo "$root/bin"
  exit 0
fi
case "$(uname -m)" in
  x86_64) arch=amd64 ;;
  aarch64) arch=arm64 ;;
  *) arch=$(uname -m) ;;
esac
module="golang.org/toolchain@v0.0.1-go$want.linux-$arch"
log "go ${have:-missing} on PATH (the toolchain mechanism needs >= 1.21): fetching $module"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dir=$(cd "$work" && GO111MODULE=on GOFLAGS= go mod download -json "$module" | awk -F'"' '$2 == "Dir" {print $4}')
if [ -z "$dir" ] || [ ! -f "$dir/bin/go" ]; then
  log "could not fetch $module from the Go module proxy"
  exit 1
fi
# Module zips keep no execute bits (GOTOOLCHAIN=auto sets them itself): copy out of the read-only
# module cache and mark the binaries executable.
rm -rf "$root.tmp" && cp -r "$dir" "$root.tmp" && chmod -R u+w "$root.tmp"
chmod +x "$root.tmp"/bin/* "$root.tmp"/pkg/tool/*/*
rm -rf "$root" && mv "$root.tmp" "$root"
touch "$root/.complete"
echo "$root/bin"
