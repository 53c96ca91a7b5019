#!/usr/bin/env bash
# Fidelity and speed of fslab's classic front-ends against the originals: runs bench/dbench.sh
# (Debian's dbench 4.0) and bench/sysbench.sh (sysbench 1.0.20), each on a tmpfs and an ext4
# loop image, and prints operation shares and headline ratios. Needs root, dbench and sysbench.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/dbench.sh" "$@"
echo
"$here/sysbench.sh" "$@"
