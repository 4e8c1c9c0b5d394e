#!/usr/bin/env bash
# Measures repeated code with the jscpd copy-paste detector (fetched by npx, not a dependency of the project).
# Usage: scripts/cpd.sh [DIR]   (DIR defaults to the repository; point it at an exported older commit to compare, e.g.
#   mkdir /tmp/old && git archive 9e0da0b | tar -x -C /tmp/old && scripts/cpd.sh /tmp/old)
# Prints one line per scope: source modules only (no tests), and everything (sources, tests, scripts, benchmarks),
# each at jscpd's default clone size (50 tokens) and at a finer one (30 tokens). Generated code is left out.
set -euo pipefail
root="$(cd "${1:-$(dirname "$0")/..}" && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
jscpd=(npx --yes jscpd@4.3.0)
common_ignore='**/node_modules/**,**/dist/**,**/*.d.ts,**/generated/**'
printf '%-8s %-10s %8s %8s %7s %12s %7s\n' scope min-tokens files lines clones dup-lines dup-%
for tokens in 50 30; do
  for scope in source all; do
    ignore="$common_ignore"
    if [ "$scope" = source ]; then ignore="$ignore,**/test/**,**/*.test.ts"; fi
    (cd "$root" && "${jscpd[@]}" --silent --min-tokens "$tokens" --format typescript,javascript --ignore "$ignore" \
      --reporters json --output "$out/$scope-$tokens" packages services scripts bench test >/dev/null)
    node -e '
      const t = require(process.argv[1]).statistics.total;
      const [scope, tokens] = process.argv.slice(2);
      console.log([scope.padEnd(8), tokens.padEnd(10), String(t.sources).padStart(8), String(t.lines).padStart(8),
        String(t.clones).padStart(7), String(t.duplicatedLines).padStart(12), String(t.percentage).padStart(7)].join(" "));
    ' "$out/$scope-$tokens/jscpd-report.json" "$scope" "$tokens"
  done
done
