#!/usr/bin/env bash
# Builds the Debian package (`cargo deb`: its contents are [package.metadata.deb] in Cargo.toml),
# installs it with dpkg on this machine, and checks it as a user of the installed tool would:
# `man -w anarchon-run` finds the page, a new bash completes `anarchon ru<TAB>` to run and
# run-now, zsh and fish find their completions, and the binary runs; the documentation is there
# with every link of it leading to a file beside it; `anarchon cron`'s systemd unit is installed
# and not enabled, its user exists and the example crontab is a conffile. Debian/Ubuntu, root or
# sudo.
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
# A fresh install, as on a new host: an earlier one (and its conffile) purged first.
as_root dpkg --purge anarchon >/dev/null 2>&1 || true
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
doc=/usr/share/doc/anarchon
for f in README.md docs/guide.md docs/store-format.md docs/deploy/README.md \
  docs/deploy/anarchon-cron.service docs/deploy/kubernetes.yaml docs/deploy/crontab \
  docs/monitoring/alerts.yml docs/monitoring/grafana-dashboard.json; do
  [ -r "$doc/$f" ] || fail "$doc/$f is missing"
done
# The README links the guide (and the guide the rest) by paths relative to it, as in the
# repository: each leads to an installed file.
for f in README.md docs/guide.md docs/deploy/README.md; do
  grep -o '\]([^)#[:space:]]*' "$doc/$f" | sed 's/^](//' | grep -v '^https\?:' | sort -u |
    while read -r target; do
      [ -e "$(dirname "$doc/$f")/$target" ] || fail "$doc/$f links $target, which the package lacks"
    done
done
echo "documentation: $(find "$doc" -type f | wc -l) files in $doc, every link found"

# anarchon cron as a service: the unit installed and not enabled, its user, the conffile.
unit=/usr/lib/systemd/system/anarchon-cron.service
[ -r "$unit" ] || fail "no $unit"
cmp -s "$unit" docs/deploy/anarchon-cron.service || fail "$unit is not docs/deploy/anarchon-cron.service"
if ls /etc/systemd/system/*.wants/anarchon-cron.service >/dev/null 2>&1; then
  fail "installing the package enabled anarchon-cron"
fi
state=$(systemctl is-enabled anarchon-cron 2>/dev/null || true)
[ "$state" = disabled ] || fail "systemctl is-enabled anarchon-cron: '$state', not disabled"
echo "unit: $unit ($state)"
[ -r /usr/lib/sysusers.d/anarchon.conf ] || fail "no /usr/lib/sysusers.d/anarchon.conf"
user=$(getent passwd anarchon) || fail "the package created no user anarchon (the unit's User=)"
getent group anarchon >/dev/null || fail "the package created no group anarchon (the unit's Group=)"
[ "$(echo "$user" | cut -d: -f3)" -lt 1000 ] || fail "anarchon is no system user: $user"
case "$user" in *:/var/lib/anarchon:*nologin) ;; *) fail "anarchon's home or shell: $user" ;; esac
echo "user: $user"
dpkg-query -W -f='${Conffiles}\n' anarchon | grep -q '^ /etc/anarchon/crontab ' ||
  fail "/etc/anarchon/crontab is no conffile of the package"
cmp -s /etc/anarchon/crontab docs/deploy/crontab || fail "/etc/anarchon/crontab is not docs/deploy/crontab"
# As shipped it runs nothing: the unit's ExecStartPre refuses it, so enabling it early is harmless.
if /usr/bin/anarchon cron --check /etc/anarchon/crontab >/dev/null 2>&1; then
  fail "the example crontab has a job the service would run"
fi
echo "conffile: /etc/anarchon/crontab"
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
