#!/usr/bin/env bash
# Builds the Debian package (`cargo deb`: its contents are [package.metadata.deb] in Cargo.toml),
# installs it with dpkg on this machine, and checks it as a user of the installed tool would:
# `man -w anarchon-run` finds the page, a new bash completes `anarchon ru<TAB>` to run and
# run-now, zsh and fish find their completions, and the binary runs. Debian/Ubuntu, root or sudo.
# .ci/run runs it after the suite. It installs cargo-deb (crates.io) and bash-completion if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
export DEBIAN_FRONTEND=noninteractive
say() { printf '== %s\n' "$*"; }

command -v cargo-deb >/dev/null || cargo install cargo-deb --locked --quiet
if [ ! -r /usr/share/bash-completion/bash_completion ] || ! command -v man >/dev/null; then
  as_root apt-get update -qq
  as_root apt-get install -y -qq bash-completion man-db >/dev/null
fi

say "building the Debian package"
deb=$(cargo deb --locked 2>/dev/null | tail -n 1)
[ -f "$deb" ] || { echo "cargo deb made no package (said: $deb)" >&2; exit 1; }
dpkg-deb --info "$deb" | sed -n '/Package:/,/Description:/p'
as_root dpkg -i "$deb" >/dev/null

say "checking the installed package"
fail() { echo "package check failed: $*" >&2; exit 1; }
[ -x /usr/bin/anarchon ] || fail "the package put no /usr/bin/anarchon"
/usr/bin/anarchon --version
# Another anarchon earlier in PATH (the README's `cargo install`, in ~/.cargo/bin) is what a shell
# runs: said, as a user who installed both would want to know, not a fault of the package.
found=$(command -v anarchon || true)
[ "$found" = /usr/bin/anarchon ] || echo "note: \`anarchon\` in PATH is $found, which comes before the package's /usr/bin/anarchon"
page=$(man -w anarchon-run) || fail "man -w anarchon-run found nothing"
echo "man -w anarchon-run: $page"
for doc in README.md store-format.md; do
  [ -r "/usr/share/doc/anarchon/$doc" ] || fail "/usr/share/doc/anarchon/$doc is missing"
done
# A new bash, as a login would start it, with bash-completion loading anarchon's on demand.
words=$(env -i HOME="$HOME" PATH=/usr/bin:/bin bash --norc -c '
  source /usr/share/bash-completion/bash_completion
  __load_completion anarchon 2>/dev/null || _completion_loader anarchon
  func=$(complete -p anarchon | sed -E "s/.*-F ([^ ]+).*/\1/")
  COMP_WORDS=(anarchon ru); COMP_CWORD=1; COMP_LINE="anarchon ru"; COMP_POINT=${#COMP_LINE}
  "$func" anarchon ru anarchon
  echo "${COMPREPLY[*]}"')
echo "bash completes anarchon ru<TAB>: $words"
case " $words " in *" run "*) ;; *) fail "bash does not complete anarchon ru<TAB> to run" ;; esac
case " $words " in *" run-now "*) ;; *) fail "bash does not complete anarchon ru<TAB> to run-now" ;; esac
[ -r /usr/share/zsh/vendor-completions/_anarchon ] || fail "no zsh completion"
[ -r /usr/share/fish/vendor_completions.d/anarchon.fish ] || fail "no fish completion"
say "package ok"
