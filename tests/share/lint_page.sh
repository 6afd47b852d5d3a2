#!/bin/sh
# Lints the page's JavaScript (src/web/page.js) with Debian's eslint and the repository's config
# (src/web/eslintrc.json, no network, no plugins), after `node --check`. Exit 77 (ctest: skipped)
# only when eslint is not installed.
# Usage: lint_page.sh SOURCE_DIR
set -u
src="$1/src/web"
if command -v node >/dev/null 2>&1; then
  node --check "$src/page.js" || exit 1
fi
if ! command -v eslint >/dev/null 2>&1; then
  echo "skipped: eslint is not installed (Debian package eslint; scripts/install-deps.sh installs it)"
  exit 77
fi
# Debian's eslint lives in /usr/share/nodejs, which a Node.js not from Debian (e.g. nodesource's)
# does not search by itself.
# From the page's folder: eslint's ignore rules want paths inside the working directory.
# The 'unix' formatter (file:line:column: message) needs no other package; the default 'stylish'
# needs node-chalk, which Debian's eslint only recommends (install-deps.sh installs no
# recommends).
cd "$src" || exit 1
NODE_PATH="/usr/share/nodejs:/usr/lib/nodejs${NODE_PATH:+:$NODE_PATH}" \
  eslint --no-eslintrc -c eslintrc.json --max-warnings 0 -f unix page.js
status=$?
[ "$status" -eq 0 ] && echo "eslint: $src/page.js is clean"
exit "$status"
