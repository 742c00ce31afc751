#!/bin/sh
# The Debian packages some tests use: tshark (the pcap files read back as TCP/IP) and
# chromium (the reproduction report loaded in a browser). Installed where this runs as
# root with apt-get (CI does); elsewhere those tests skip and say why. Never fails.
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    missing=""
    command -v tshark >/dev/null 2>&1 || missing="$missing tshark"
    command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
    if [ -n "$missing" ]; then
        echo "installing$missing (Debian packages) for the pcap and browser tests"
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing; } \
            >/dev/null 2>&1 || echo "could not install$missing: those tests will skip"
    fi
else
    echo "not root with apt-get: the tshark and chromium tests skip unless those are installed"
fi
exit 0
