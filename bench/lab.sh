#!/usr/bin/env bash
# bench/lab.sh: the lab's own overhead per cell, on a fresh sparse loop image for each cell.
#
#   sudo bench/lab.sh                       # ROUNDS=5 SIZE_GIB=4 FS=ext4,xfs: a few seconds
#   ROUNDS=9 FS=ext4,xfs,btrfs bench/lab.sh
#
# Steps timed, per cell: attach (a sparse image on a loop device), wipe (wipefs -a), mkfs,
# mount, umount, detach. The cell's overhead is wipe + mkfs + mount + umount, the part the
# issue sets a goal for: <= 2 s per cell (median over the rounds). Types alternate within each
# round. Everything runs through fslab's lab crate (crates/lab/examples/lab_overhead.rs).
# Exit: 0 when everything ran (PASS or MISS), 1 when a step failed, 2 on a bad setting, 3 when
# something is missing (root, a mkfs tool, cargo to build the example).

set -uo pipefail

ROUNDS=${ROUNDS:-5}
SIZE_GIB=${SIZE_GIB:-4}
FS=${FS:-ext4,xfs}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "lab.sh: ROUNDS must be a positive integer, not '$ROUNDS'" >&2; exit 2; }
[[ $SIZE_GIB =~ ^[1-9][0-9]*$ ]] || { echo "lab.sh: SIZE_GIB must be a positive integer, not '$SIZE_GIB'" >&2; exit 2; }

missing=()
[[ $(id -u) == 0 ]] || missing+=("root (loop devices, mkfs and mount need it: run with sudo)")
command -v cargo >/dev/null || missing+=("cargo, to build crates/lab/examples/lab_overhead.rs")
command -v wipefs >/dev/null || missing+=("wipefs (apt-get install util-linux)")
IFS=, read -ra types <<<"$FS"
for t in "${types[@]}"; do
    case $t in
        ext2|ext3|ext4) pkg=e2fsprogs ;;
        xfs) pkg=xfsprogs ;;
        btrfs) pkg=btrfs-progs ;;
        *) echo "lab.sh: FS: '$t' is not one of ext2, ext3, ext4, xfs, btrfs" >&2; exit 2 ;;
    esac
    command -v "mkfs.$t" >/dev/null || missing+=("mkfs.$t (apt-get install $pkg)")
done
if ((${#missing[@]})); then
    echo "lab.sh: cannot run; missing:" >&2
    printf '  - %s\n' "${missing[@]}" >&2
    exit 3
fi

cd "$REPO" || exit 1
if ! cargo build --release --quiet -p fslab-lab --example lab_overhead; then
    echo "lab.sh: building the lab_overhead example failed" >&2
    exit 1
fi
echo "host: $(uname -n), kernel $(uname -r), $(nproc) CPUs; $(mkfs.ext4 -V 2>&1 | head -1); $(mkfs.xfs -V 2>&1 | head -1)"
echo
exec "$REPO/target/release/examples/lab_overhead" --rounds "$ROUNDS" --size-gib "$SIZE_GIB" --fs "$FS"
