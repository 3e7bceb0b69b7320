#!/usr/bin/env bash
# Installs what CipherCask needs on a Debian machine that already has the Swift toolchain:
# libcrypto's headers for the library, and the benchmark's peers (SQLite, SQLCipher and its
# shell, LMDB, LevelDB) plus openssl and hyperfine, and python3 with its cryptography module for
# the tests (the REST server of the HTTP tests, and scripts/read-store.py, the independent reader of the
# format). Installs only what is missing; safe to run again.
set -euo pipefail

packages=(libssl-dev openssl libsqlite3-dev libsqlcipher-dev sqlcipher liblmdb-dev libleveldb-dev hyperfine python3 python3-cryptography)
missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: everything is installed"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "setup: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
