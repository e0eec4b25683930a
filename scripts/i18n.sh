#!/usr/bin/env bash
# The tool's message catalogs (service/web/translations).
#   scripts/i18n.sh compile   .po -> .mo for every language (scripts/setup.sh runs this; the .mo
#                             files are build output, never committed)
#   scripts/i18n.sh update    extract every marked string into messages.pot and merge it into each
#                             language's .po (new strings come in untranslated, changed ones fuzzy);
#                             then translate them: tests/service/web/test_i18n.py fails until done
set -euo pipefail
cd "$(dirname "$0")/.."
dir=service/web/translations
pybabel=.venv/bin/pybabel
case "${1:-}" in
  compile)
    "$pybabel" compile -d "$dir" -D messages
    ;;
  update)
    "$pybabel" extract -F "$dir/babel.cfg" -k say -k say_n:1,2 -k N_ \
      --no-location --sort-output --omit-header -o "$dir/messages.pot" .
    for po in "$dir"/*/LC_MESSAGES/messages.po; do
      "$pybabel" update --no-fuzzy-matching --ignore-obsolete \
        -i "$dir/messages.pot" -d "$dir" -D messages -l "$(basename "$(dirname "$(dirname "$po")")")"
    done
    ;;
  *) echo "usage: scripts/i18n.sh compile|update" >&2; exit 2 ;;
esac
