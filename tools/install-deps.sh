#!/usr/bin/env bash
# Installs the Debian packages weir builds and tests with, if any is missing.
# As root it runs apt-get; otherwise it prints the exact command and stops.
set -eu
pkgs=(cmake ninja-build g++ clang libclang-rt-14-dev pkg-config python3
      libgtest-dev libgmock-dev libbenchmark-dev libpcap-dev libcli11-dev
      libtomlplusplus-dev nlohmann-json3-dev libfmt-dev nettle-dev liburing-dev tshark iproute2
      curl wget netcat-openbsd iperf3 ethtool valgrind)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "weir needs these Debian packages; run:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
