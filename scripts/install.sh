#!/usr/bin/env bash
# Installs everything kbt needs on a fresh Debian machine, idempotently:
#   - Debian packages: Java 17 (if missing), Maven (if missing), Prometheus + promtool, jq (the
#     runbook's JSON queries), python3-venv, Go (Debian's; a newer toolchain is fetched, see below)
#   - a virtual environment ($KBT_VENV, default .venv in the checkout) holding the Python package
#     with its dev extras: Debian 12 refuses pip into the system Python (PEP 668)
#   - the Go toolchain loadtests/sarama-engine/go.mod asks for, through Go's toolchain mechanism
#     (GOTOOLCHAIN=auto on Go >= 1.21; on an older Go, such as Debian 12's 1.19, the same
#     golang.org/toolchain module fetched from the Go module proxy)
#   - Apache Kafka 4.1.1 runtime jars and the jmx_exporter agent from Maven Central,
#     into a cache outside the repository ($KBT_CACHE, default ~/.cache/kbt)
#   - the Filebeat load engine (Go, loadtests/sarama-engine) built into that cache's bin/
#   - the Java load engine (Maven, loadtests/java-engine) built into that cache's java-engine/
#   - a minimal OpenTelemetry Collector (Go, loadtests/otelcol-engine) built into that cache's bin/
#   - the lab's broker plugin (loadtests/broker-plugin, javac) into that cache's broker-plugin/
#   - toxiproxy-server (Go module github.com/Shopify/toxiproxy/v2) for network faults, same bin/
#   - real Filebeat, built from the versions pinned in scripts/filebeat/pins (scripts/build_filebeat.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${KBT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kbt}
kafka_version=4.1.1
jmx_version=1.0.1
py=${PYTHON:-python3}  # the interpreter the virtual environment is made from
venv=${KBT_VENV:-$here/.venv}
# KBT_INSTALL_STAGE=base installs what a lab and librdkafka runs need (packages, the venv, Kafka's
# jars, the jmx agent and exporter, the broker plugin) and stops there: `make demo` shows a first
# result from it, then installs the rest (the Go shippers, the Java engine, toxiproxy) before the
# runs that need them, never beside a measured run. Anything else: everything.
stage=${KBT_INSTALL_STAGE:-all}
case "$stage" in base|all) ;; *) printf 'install: KBT_INSTALL_STAGE must be base or all (got %s)\n' "$stage" >&2; exit 2;; esac
engines() { [ "$stage" = all ]; }

log() { printf 'install: %s\n' "$*" >&2; }
# Every step says what it does, then how long it took; a step with nothing to do says so in one line.
now_ms() { date +%s%3N; }
install_start=$(now_ms)
step_start=0
step_name=""
secs() { local ms=$(( $(now_ms) - $1 )); printf '%d.%d s' $((ms / 1000)) $(((ms % 1000) / 100)); }
begin() { step_name=$1; step_start=$(now_ms); log "$1 ..."; }
end() { log "$step_name: done in $(secs "$step_start")"; }
ready() { log "$1: up to date"; }

apt_pkgs=()
command -v java >/dev/null 2>&1 || apt_pkgs+=(openjdk-17-jre-headless)
command -v mvn >/dev/null 2>&1 || apt_pkgs+=(maven)
command -v prometheus >/dev/null 2>&1 || apt_pkgs+=(prometheus)
command -v promtool >/dev/null 2>&1 || apt_pkgs+=(prometheus)
command -v go >/dev/null 2>&1 || apt_pkgs+=(golang-go)
command -v jq >/dev/null 2>&1 || apt_pkgs+=(jq)
command -v git >/dev/null 2>&1 || apt_pkgs+=(git)  # Go fetches some modules from their repositories
# Debian's python3 has no ensurepip without python3-venv; a venv that exists already needs neither.
if [ ! -x "$venv/bin/python" ] && ! "$py" -c 'import ensurepip, venv' >/dev/null 2>&1; then apt_pkgs+=(python3-venv); fi
if [ "${KBT_WITH_CHROMIUM:-0}" = 1 ] && ! command -v chromium >/dev/null 2>&1; then apt_pkgs+=(chromium); fi
if [ ${#apt_pkgs[@]} -gt 0 ]; then
  begin "apt-get install ${apt_pkgs[*]}"
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${apt_pkgs[@]}" >/dev/null
  end
else
  ready "Debian packages"
fi

# The Python package lives in a virtual environment: every make target runs $venv/bin/python.
# The editable install must point at this checkout: a venv copied or reused from another clone
# would otherwise answer `kbt` (and `import tuner`) with that clone's code.
if [ ! -x "$venv/bin/python" ]; then
  begin "python -m venv $venv"
  "$py" -m venv "$venv"
  end
fi
vpy="$venv/bin/python"
stamp="$venv/.kbt-$( (sha1sum "$here/pyproject.toml"; echo "$here") | sha1sum | cut -c1-12)"
installed_at=$(cd / && "$vpy" -c 'import os, tuner; print(os.path.dirname(os.path.dirname(os.path.realpath(tuner.__file__))))' 2>/dev/null || true)
if [ ! -f "$stamp" ] || [ ! -x "$venv/bin/kbt" ] || [ "$installed_at" != "$(realpath "$here")" ]; then
  begin "pip install -e .[dev] (kbt and its dev tools)"
  "$vpy" -m pip install -q --disable-pip-version-check --upgrade pip
  "$vpy" -m pip install -q --disable-pip-version-check -e "$here[dev]"
  "$vpy" -c "import tuner, confluent_kafka" >/dev/null
  rm -f "$venv"/.kbt-* && touch "$stamp"
  end
else
  ready "Python packages in $venv"
fi

# Go: the engines' go.mod names the Go they need; an old system Go gets that toolchain first on PATH.
if engines; then
  go_bin=$(bash "$here/scripts/go_toolchain.sh" "$here/loadtests/sarama-engine/go.mod" "$cache")
  if [ -n "$go_bin" ]; then export PATH="$go_bin:$PATH"; fi
  export GOTOOLCHAIN=${GOTOOLCHAIN:-auto}
fi

libs="$cache/kafka-$kafka_version/libs"
# The stamp names the pom it was resolved from: a changed pom re-resolves into a fresh directory
# that then replaces the old one (running brokers keep finding their jars under the same names).
# Maven in batch mode, its output without colour codes: Maven 3.9 still writes colour resets at
# exit with style.color=never, which a CI log shows as "[0m" (pipefail keeps mvn's status).
mvn_plain() { mvn -q -B -Dstyle.color=never "$@" 2>&1 | sed 's/\x1b\[[0-9;]*m//g'; }
pom_id=$(sha1sum "$here/scripts/maven/pom.xml" | cut -c1-12)
if [ ! -f "$libs/.complete-$pom_id" ]; then
  begin "fetching Kafka $kafka_version jars into the cache"
  fresh="$libs.new.$$"
  rm -rf "$fresh" && mkdir -p "$fresh"
  mvn_plain -f "$here/scripts/maven/pom.xml" dependency:copy-dependencies \
    -DoutputDirectory="$fresh" -DincludeScope=runtime
  ls "$fresh"/kafka_2.13-"$kafka_version".jar "$fresh"/kafka-storage-"$kafka_version"-test.jar >/dev/null
  touch "$fresh/.complete-$pom_id"
  rm -rf "$libs.old"
  if [ -d "$libs" ]; then mv "$libs" "$libs.old"; fi
  mv "$fresh" "$libs"
  rm -rf "$libs.old"
  end
else
  ready "Kafka $kafka_version jars"
fi

agent="$cache/jmx/jmx_prometheus_javaagent-$jmx_version.jar"
if [ ! -f "$agent" ]; then
  begin "fetching jmx_prometheus_javaagent $jmx_version"
  mvn_plain -f "$here/scripts/maven/pom.xml" dependency:copy \
    -Dartifact="io.prometheus.jmx:jmx_prometheus_javaagent:$jmx_version" -DoutputDirectory="$cache/jmx"
  end
else
  ready "jmx_prometheus_javaagent $jmx_version"
fi
# The standalone exporter: a lab's extra_dialects read each broker's JMX port with it.
httpserver="$cache/jmx/jmx_prometheus_httpserver-$jmx_version.jar"
if [ ! -f "$httpserver" ]; then
  begin "fetching jmx_prometheus_httpserver $jmx_version"
  mvn_plain -f "$here/scripts/maven/pom.xml" dependency:copy \
    -Dartifact="io.prometheus.jmx:jmx_prometheus_httpserver:$jmx_version" -DoutputDirectory="$cache/jmx"
  end
else
  ready "jmx_prometheus_httpserver $jmx_version"
fi
# A Go program of loadtests/NAME built into the cache's bin/, rebuilt when its go.mod, go.sum or
# sources change (the stamp names their hash). go.mod asks for a recent Go; Go >= 1.21 fetches that
# toolchain by itself.
go_engine() {
  local name=$1 what=$2 ldflags=$3
  local src="$here/loadtests/$name" bin="$cache/bin/$name" id
  id=$(cat "$src"/go.mod "$src"/go.sum "$src"/*.go | sha1sum | cut -c1-12)
  if [ -x "$bin" ] && [ -f "$cache/bin/.$name-$id" ]; then ready "$name"; return 0; fi
  begin "building $name$what into the cache"
  mkdir -p "$cache/bin"
  if ! (cd "$src" && GOFLAGS=-mod=readonly go build -trimpath ${ldflags:+-ldflags=$ldflags} -o "$bin.tmp" .); then
    log "go build failed in loadtests/$name (found: $(go version 2>&1))"
    exit 1
  fi
  mv "$bin.tmp" "$bin"
  rm -f "$cache"/bin/."$name"-*
  touch "$cache/bin/.$name-$id"
  end
}
# The Filebeat engine (Sarama from the Go module proxy).
if engines; then go_engine sarama-engine "" ""; fi
# The OpenTelemetry Collector (filelog receiver, kafka exporter: one pinned release of the collector
# modules from the Go module proxy, checksums in its go.sum). The longest step by far on a cold cache
# (~10 min on 2 cores, much of it fetching ~512 MB of modules), so it runs in the background beside
# the steps below (the Go caches take concurrent builds); the install waits for it before it ends.
# Its own process group (set -m), so an install failing below stops the whole build with it.
otelcol_pid=""
if engines; then
  set -m
  go_engine otelcol-engine " (OpenTelemetry Collector)" "-s" &
  otelcol_pid=$!
  set +m
  trap 'kill -- -"$otelcol_pid" 2>/dev/null || true' EXIT
fi
# The Java load engine (Maven, kafka-clients of the lab's version): its jar and runtime classpath
# into the cache's java-engine/, rebuilt when its pom or sources change. javac comes from a JDK.
if ! command -v javac >/dev/null 2>&1; then
  begin "apt-get install openjdk-17-jdk-headless (javac for the Java engine)"
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends openjdk-17-jdk-headless >/dev/null
  end
fi
jengine_src="$here/loadtests/java-engine"
jengine_dir="$cache/java-engine"
jengine_id=$( (cat "$jengine_src/pom.xml"; find "$jengine_src/src" -type f -name '*.java' | sort | xargs cat) | sha1sum | cut -c1-12)
if ! engines; then
  :
elif [ ! -f "$jengine_dir/.complete-$jengine_id" ]; then
  begin "building the Java engine into the cache"
  build=$(mktemp -d)
  mvn_plain -f "$jengine_src/pom.xml" package dependency:copy-dependencies \
    -DoutputDirectory="$build/lib" -DincludeScope=runtime
  cp "$jengine_src/target/kbt-java-engine.jar" "$build/lib/"
  rm -rf "$jengine_src/target" "$jengine_dir"
  mkdir -p "$cache"
  mv "$build/lib" "$jengine_dir"
  rm -rf "$build"
  touch "$jengine_dir/.complete-$jengine_id"
  end
else
  ready "Java engine"
fi
# The lab's broker plugin (loadtests/broker-plugin: the pressure profile's per-request service
# time), compiled against the cached Kafka jars into the cache's broker-plugin/.
plugin_src="$here/loadtests/broker-plugin/src"
plugin_dir="$cache/broker-plugin"
plugin_id=$( (echo "$pom_id"; find "$plugin_src" -type f -name '*.java' | sort | xargs cat) | sha1sum | cut -c1-12)
if [ ! -f "$plugin_dir/.complete-$plugin_id" ]; then
  begin "building the lab's broker plugin into the cache"
  build=$(mktemp -d)
  javac -nowarn -Xlint:none -d "$build/classes" -cp "$libs/*" $(find "$plugin_src" -type f -name '*.java' | sort)
  jar cf "$build/kbt-broker-plugin.jar" -C "$build/classes" .
  rm -rf "$plugin_dir" && mkdir -p "$plugin_dir"
  mv "$build/kbt-broker-plugin.jar" "$plugin_dir/"
  rm -rf "$build"
  touch "$plugin_dir/.complete-$plugin_id"
  end
else
  ready "broker plugin"
fi
# Toxiproxy (network faults for `kbt chaos`, `kbt lab up --via-toxiproxy`): the Go module built into
# the cache's bin/ as toxiproxy-server, pinned to one release.
toxiproxy_version=v2.5.0
toxiproxy_bin="$cache/bin/toxiproxy-server"
if ! engines; then
  :
elif [ ! -x "$toxiproxy_bin" ] || [ ! -f "$cache/bin/.toxiproxy-$toxiproxy_version" ]; then
  begin "building toxiproxy-server $toxiproxy_version into the cache"
  gobin=$(mktemp -d)
  if ! GOBIN="$gobin" GOFLAGS=-mod=mod go install -trimpath "github.com/Shopify/toxiproxy/v2/cmd/server@$toxiproxy_version"; then
    rm -rf "$gobin"
    log "go install github.com/Shopify/toxiproxy/v2/cmd/server@$toxiproxy_version failed"
    exit 1
  fi
  mkdir -p "$cache/bin"
  mv "$gobin/server" "$toxiproxy_bin"
  rm -rf "$gobin" "$cache"/bin/.toxiproxy-*
  touch "$cache/bin/.toxiproxy-$toxiproxy_version"
  end
else
  ready "toxiproxy-server $toxiproxy_version"
fi
# Real Filebeat (elastic/beats from the Go module proxy, checksum-verified, pinned): built into the
# cache's filebeat/<version>/, rebuilt only when its pin line changes.
if engines; then KBT_CACHE="$cache" bash "$here/scripts/build_filebeat.sh"; fi
if [ -n "$otelcol_pid" ] && ! wait "$otelcol_pid"; then
  log "building otelcol-engine failed (see above)"
  exit 1
fi
trap - EXIT
if engines; then
  log "ready in $(secs "$install_start") (virtual environment: $venv; cache: $cache)"
else
  log "base ready in $(secs "$install_start") (the lab and librdkafka runs; the shippers, Java and toxiproxy come with a full install)"
fi
