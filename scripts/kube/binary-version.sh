# Sourced by scripts/kube/install.sh and install-node.sh: whether a cached binary is the pinned release.
#   current NAME VERSION ARGS...  true when $BIN/NAME exists and `$BIN/NAME ARGS...` prints VERSION (its leading v
#                                 optional) as a whole word: a missing binary, or one of another release, is built again.
#   built NAME VERSION ARGS...    the same check after a build, which fails loudly instead of building at every run.
current() {
  local name="$1" want="${2#v}" out
  shift 2
  [ -x "$BIN/$name" ] || return 1
  out="$(timeout 30 "$BIN/$name" "$@" 2>&1 </dev/null)" || true
  grep -Eq "(^|[^0-9A-Za-z.])v?${want//./\\.}([^0-9A-Za-z.]|$)" <<<"$out"
}
built() {
  current "$@" && return 0
  echo "$(basename "$0"): $BIN/$1 does not report $2 after its build ($BIN/$1 ${*:3})" >&2
  return 1
}
