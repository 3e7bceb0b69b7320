#!/usr/bin/env bash
# Installs what CipherCask needs on a Debian machine that already has the Swift toolchain:
# libcrypto's headers for the library, and the benchmark's peers (SQLite, SQLCipher and its
# shell, LMDB, LevelDB) plus openssl and hyperfine, and python3 with its cryptography module for
# the tests (the REST server of the HTTP tests, and scripts/read-store.py, the independent reader of the
# format), PostgreSQL, and a venv with PyPI's kinto (and its PostgreSQL driver) at .venv-kinto
# for the sync tests. Installs only what is missing; safe to run again.
set -euo pipefail

packages=(libssl-dev openssl libsqlite3-dev libsqlcipher-dev sqlcipher liblmdb-dev libleveldb-dev hyperfine python3 python3-cryptography python3-venv postgresql)
missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: every Debian package is installed"
else
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Kinto, the sync server the CipherCaskSync tests start (Docs/SYNC.md), in a venv inside the
# repository (ignored by git). A venv whose kinto does not run is made again.
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.venv-kinto"
if "$venv/bin/kinto" --help >/dev/null 2>&1 && "$venv/bin/python" -c "import psycopg2" 2>/dev/null; then
  echo "setup: kinto is installed in .venv-kinto"
else
  echo "setup: installing kinto into .venv-kinto"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check 'kinto[postgresql]'
fi
