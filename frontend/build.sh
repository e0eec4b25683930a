#!/usr/bin/env bash
# Build the lesson page's code editor: frontend/editor.js and its pinned npm
# packages -> one minified IIFE that the Python package serves as a static file.
#   frontend/build.sh            writes service/web/static/vendor/codemirror.{js,LICENSES.txt,sha256}
#   frontend/build.sh OUT_DIR    writes the same three files into OUT_DIR instead
# It also copies the accessibility audit script the browser tests inject (axe-core's
# axe.min.js as the package ships it, its licenses and a sha256) to tests/a11y, or to
# AXE_DIR with `frontend/build.sh OUT_DIR AXE_DIR`. That script is for tests only: the
# app never serves it.
# Needs node and npm, and the npm registry (npm ci). The output is byte-identical
# from one clean build to the next: commit it, so nothing else needs npm.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../service/web/static/vendor}
mkdir -p "$out"
out=$(cd "$out" && pwd)
axe=${2:-$here/../tests/a11y}
mkdir -p "$axe"
axe=$(cd "$axe" && pwd)
cd "$here"

# exactly what package-lock.json says
npm ci --no-audit --no-fund

# everything that could leak the machine or the moment into the output stays fixed
export LC_ALL=C TZ=UTC SOURCE_DATE_EPOCH=0
meta=$(mktemp)
trap 'rm -f "$meta" "$out/codemirror.js.tmp"' EXIT

./node_modules/.bin/esbuild editor.js \
  --bundle \
  --format=iife \
  --platform=browser \
  --target=es2019 \
  --minify \
  --charset=utf8 \
  --legal-comments=eof \
  --log-level=warning \
  --metafile="$meta" \
  --outfile="$out/codemirror.js.tmp"
mv "$out/codemirror.js.tmp" "$out/codemirror.js"

# the license of every npm package that went into the bundle, in name order
node - "$meta" "$out/codemirror.LICENSES.txt" <<'EOF'
const fs = require("fs");
const path = require("path");
const [meta, target] = process.argv.slice(2);
const inputs = Object.keys(JSON.parse(fs.readFileSync(meta, "utf8")).inputs);
const names = new Set();
for (const input of inputs) {
  const m = input.match(/(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (m) names.add(m[1]);
}
const parts = [
  "Third-party software in codemirror.js, built by frontend/build.sh from frontend/package-lock.json.",
  "",
];
for (const name of [...names].sort()) {
  const dir = path.join("node_modules", name);
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  const file = fs.readdirSync(dir).sort().find((f) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(f));
  if (!file) throw new Error(`${name}: no LICENSE file to include`);
  const text = fs.readFileSync(path.join(dir, file), "utf8").replace(/\r\n/g, "\n").trimEnd();
  parts.push("=".repeat(78), `${name}@${pkg.version} (${pkg.license})`, "=".repeat(78), "", text, "");
}
fs.writeFileSync(target, parts.join("\n"));
EOF

(cd "$out" && sha256sum codemirror.js > codemirror.sha256)
echo "build: $out/codemirror.js $(wc -c < "$out/codemirror.js") bytes, sha256 $(cut -d' ' -f1 "$out/codemirror.sha256")"

# the audit script, untouched, with both license files axe-core ships (its own, MPL-2.0,
# and the MIT/other licenses of what it bundles)
cp node_modules/axe-core/axe.min.js "$axe/axe.min.js"
rule=$(printf '=%.0s' {1..78})
{
  echo "axe.min.js is axe-core@$(node -p 'require("./node_modules/axe-core/package.json").version') (MPL-2.0), copied unchanged by frontend/build.sh."
  echo
  echo "$rule"
  echo "axe-core LICENSE"
  echo "$rule"
  echo
  sed 's/\r$//' node_modules/axe-core/LICENSE
  echo
  echo "$rule"
  echo "axe-core LICENSE-3RD-PARTY.txt"
  echo "$rule"
  echo
  sed 's/\r$//' node_modules/axe-core/LICENSE-3RD-PARTY.txt
} > "$axe/axe.LICENSES.txt"
(cd "$axe" && sha256sum axe.min.js > axe.sha256)
echo "build: $axe/axe.min.js $(wc -c < "$axe/axe.min.js") bytes, sha256 $(cut -d' ' -f1 "$axe/axe.sha256")"
