#!/usr/bin/env bash
# Builds real Filebeat (elastic/beats from the Go module proxy) for every line of scripts/filebeat/pins
# into the kbt cache: $KBT_CACHE/filebeat/<version>/filebeat. A build is redone only when its pin line
# changes (the stamp names the line's hash). Quiet on success; on failure one line on stderr, the full
# go output kept in the cache's build.log.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${KBT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kbt}
pins="$here/scripts/filebeat/pins"

log() { printf 'install: %s\n' "$*" >&2; }
fail() { printf 'build_filebeat: %s\n' "$*" >&2; exit 1; }

build_one() {
  local version=$1 module=$2 pinned_sum=$3
  local dest="$cache/filebeat/$version"
  local stamp
  stamp="$dest/.pin-$(printf '%s %s %s' "$version" "$module" "$pinned_sum" | sha1sum | cut -c1-12)"
  if [ -x "$dest/filebeat" ] && [ -f "$stamp" ]; then log "Filebeat $version: up to date"; return 0; fi
  local started=$SECONDS
  log "building Filebeat $version into the cache (a few minutes; ~1.3 GB of Go module and build cache)"
  mkdir -p "$dest"
  local buildlog="$dest/build.log" work="$dest/.build.$$"
  rm -rf "$work"
  # The module path alone (no main-module context): -mod=mod lets go fetch it; the checksum database
  # verifies it because GONOSUMDB/GONOSUMCHECK/GOFLAGS=-insecure are not set here. One exception: a
  # pseudo-version (Filebeat 8.x/9.x keep the module path .../v7, so their release tags are no module
  # versions and a release is pinned as the pseudo-version of its tagged commit) is not in the public
  # checksum database, so the database is skipped for that one module path, and only the hash pinned
  # here vouches for it.
  local json nosumdb=
  case "${module#*@}" in
    *.0.[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f])
      nosumdb=${module%@*} ;;
  esac
  if ! json=$(cd / && env -u GONOSUMDB -u GONOSUMCHECK -u GOPRIVATE ${nosumdb:+GONOSUMDB=$nosumdb} \
      GOFLAGS=-mod=mod go mod download -json "$module" 2>"$buildlog"); then
    local why
    why=$(printf '%s' "$json" | sed -n 's/^[[:space:]]*"Error": "\(.*\)",\{0,1\}$/\1/p' | sed 's/\\[nt]/ /g')
    fail "go mod download $module failed: ${why:-see $buildlog}"
  fi
  local got_sum dir
  got_sum=$(printf '%s' "$json" | sed -n 's/^[[:space:]]*"Sum": "\(.*\)",\{0,1\}$/\1/p')
  dir=$(printf '%s' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
  [ "$got_sum" = "$pinned_sum" ] || fail "$module: module hash $got_sum does not match the pinned $pinned_sum"
  [ -d "$dir" ] || fail "$module: go mod download gave no source directory"
  # The module cache is read-only and go.mod's replace lines only apply from the module root: build
  # from a writable copy.
  mkdir -p "$work" && cp -r "$dir" "$work/src" && chmod -R u+w "$work/src"
  # The build's own dependencies are checked against the module's go.sum (and the database).
  if ! (cd "$work/src" && env -u GONOSUMDB -u GOPRIVATE GOFLAGS="-mod=mod -buildvcs=false" \
      go build -trimpath -o "$dest/filebeat.tmp" ./filebeat) >>"$buildlog" 2>&1; then
    rm -rf "$work" "$dest/filebeat.tmp"
    fail "go build of Filebeat $version failed: $(grep -v '^go: downloading' "$buildlog" | tail -n 1) (full log: $buildlog)"
  fi
  rm -rf "$work"
  "$dest/filebeat.tmp" version 2>/dev/null | grep -q "filebeat version $version" \
    || fail "the built binary does not report filebeat version $version"
  mv "$dest/filebeat.tmp" "$dest/filebeat"
  rm -f "$dest"/.pin-*
  touch "$stamp"
  log "Filebeat $version: built in $((SECONDS - started)) s"
}

[ -f "$pins" ] || fail "pin file missing: scripts/filebeat/pins"
while read -r version module sum rest; do
  case "$version" in ''|'#'*) continue ;; esac
  [ -n "$sum" ] && [ -z "${rest:-}" ] || fail "scripts/filebeat/pins: malformed line: $version $module $sum ${rest:-}"
  build_one "$version" "$module" "$sum"
done <"$pins"
