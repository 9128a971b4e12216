#!/usr/bin/env bash
# The default Vulkan driver: Mesa 25's lavapipe on Debian 12 as on Debian 13.
# Debian 12 ships Mesa 22.3, whose llvmpipe runs npvk's kernels 2-5x slower
# (docs/architecture.md, "Drivers"); bookworm-backports has Mesa 25, so on
# Debian 12 this adds that suite and installs mesa-vulkan-drivers from it,
# with the Mesa libraries it needs, and nothing else. The stock 22.3 lavapipe
# is kept beside it in /opt/npvk/mesa-22.3 (with its own ICD file), where
# scripts/test-stock-mesa.sh runs the suite on it. NPVK_STOCK_MESA=1 leaves
# Debian 12's Mesa as it is. Safe to re-run. Called by install-deps.sh.
set -euo pipefail

debian_major=$(cut -d. -f1 /etc/debian_version 2>/dev/null || echo 12)
[ "$debian_major" = 12 ] || exit 0
if [ "${NPVK_STOCK_MESA:-0}" = 1 ]; then
  echo "install-mesa: NPVK_STOCK_MESA=1: keeping Debian 12's Mesa"
  exit 0
fi

stock_dir=/opt/npvk/mesa-22.3
installed=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)
if [ "${installed%%.*}" -ge 25 ] 2>/dev/null && [ -f "$stock_dir/lvp_icd.json" ]; then
  echo "install-mesa: Mesa $installed from bookworm-backports; stock 22.3 in $stock_dir"
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
echo "install-mesa: Debian 12's Mesa 22.3 runs npvk's kernels 2-5x slower than Mesa 25:" \
     "adding bookworm-backports for mesa-vulkan-drivers (and the Mesa libraries it needs)" \
     "only (NPVK_STOCK_MESA=1 skips this)"
if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
  # Backports have priority 100: only what is asked for with -t comes from there.
  printf '%s\n' "Types: deb" "URIs: http://deb.debian.org/debian" "Suites: bookworm-backports" \
    "Components: main" "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" |
    $sudo tee /etc/apt/sources.list.d/npvk-bookworm-backports.sources > /dev/null
fi
$sudo apt-get update -q

# Keep the stock lavapipe: its library and an ICD file naming it by path.
if [ ! -f "$stock_dir/lvp_icd.json" ]; then
  work=$(mktemp -d)
  chmod 755 "$work"  # apt downloads as _apt where it can
  (cd "$work" && apt-get download -q mesa-vulkan-drivers/bookworm)
  $sudo mkdir -p "$stock_dir"
  $sudo dpkg -x "$work"/mesa-vulkan-drivers_*.deb "$stock_dir/root"
  rm -rf "$work"
  lib="$stock_dir/root/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so"
  [ -f "$lib" ] || { echo "install-mesa: no lavapipe in the stock package" >&2; exit 1; }
  api=$(sed -n 's/.*"api_version": *"\([^"]*\)".*/\1/p' \
          "$stock_dir"/root/usr/share/vulkan/icd.d/lvp_icd.*.json | head -1)
  printf '{\n  "file_format_version": "1.0.0",\n  "ICD": {\n    "library_path": "%s",\n    "api_version": "%s"\n  }\n}\n' \
    "$lib" "${api:-1.3.230}" | $sudo tee "$stock_dir/lvp_icd.json" > /dev/null
fi
# libllvm15: the stock lavapipe's LLVM (the backport's too).
$sudo apt-get install -y -q --no-install-recommends -t bookworm-backports mesa-vulkan-drivers \
  libllvm15
echo "install-mesa: Mesa $(dpkg-query -W -f='${Version}' mesa-vulkan-drivers) installed;" \
     "stock 22.3 kept in $stock_dir"
