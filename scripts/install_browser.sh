#!/usr/bin/env bash
# Installs Debian's headless browser for the end-to-end notebook check (tests/notebooks/test_browser.py):
# `chromium` and `chromium-driver`, with apt-get, when either is missing.
#
# Never fails the build: without apt-get or without root it says what to install and exits 0, and the browser
# test then skips with a reason. Idempotent: a machine that has both binaries is left alone.
set -uo pipefail

has_browser() {
    command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1
}

if has_browser; then
    echo "install_browser: chromium and chromedriver are present ($(chromium --version 2>/dev/null))"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_browser: no apt-get here; install Chromium and its driver by hand to run the browser test" \
         "(it skips without them)"
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "install_browser: not root; run 'sudo apt-get install -y chromium chromium-driver' to enable the" \
         "browser test (it skips without them)"
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y --no-install-recommends chromium chromium-driver; then
    # A fresh image may have no package lists yet.
    apt-get update && apt-get install -y --no-install-recommends chromium chromium-driver
fi
if has_browser; then
    echo "install_browser: installed $(chromium --version 2>/dev/null)"
else
    echo "install_browser: apt-get could not install chromium and chromium-driver; the browser test will skip"
fi
exit 0
