#!/usr/bin/env bash
# fslab dbench against Debian's dbench 4.0, on the same workload in one go: on a tmpfs and on an
# ext4 loop image, for each client count, runs `dbench -D DIR -t T N` and then
# `fslab dbench -D DIR -t T N` (same loadfile, /usr/share/dbench/client.txt), and prints
#   - each operation's share of all operations for both (from the Count column of their tables),
#     and the difference in percentage points (goal: within 1 pp);
#   - the ratio of the headline Throughput figures, fslab / dbench (goal: >= 1.0 on tmpfs,
#     0.95-1.05 on ext4).
# Needs root (mount, loop devices), dbench, mkfs.ext4. Environment:
#   T=20           seconds of the execute phase (each tool adds its T/5 warm-up)
#   NPROCS="2 8"   client counts
#   FS="tmpfs ext4"
#   REPEAT=1       pairs of runs per case, the order alternating (dbench first in odd pairs);
#                  the ratio printed is the median of the pairs' ratios, the shares are the
#                  last pair's
#   IMAGE_SIZE=8G  the sparse ext4 image
#   FSLAB=...      the fslab binary (default: target/release/fslab, built if missing)
#   KEEP_LOGS=DIR  copy every tool's output there
set -euo pipefail

T=${T:-20}
REPEAT=${REPEAT:-1}
NPROCS=${NPROCS:-"2 8"}
FS=${FS:-"tmpfs ext4"}
IMAGE_SIZE=${IMAGE_SIZE:-8G}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

die() { echo "bench/dbench.sh: $*" >&2; exit 3; }
[ "$(id -u)" -eq 0 ] || die "needs root (mount, loop devices)"
command -v dbench >/dev/null || die "needs dbench (apt-get install dbench)"
command -v mkfs.ext4 >/dev/null || die "needs mkfs.ext4 (apt-get install e2fsprogs)"
[ -f /usr/share/dbench/client.txt ] || die "needs /usr/share/dbench/client.txt (apt-get install dbench)"

if [ -z "${FSLAB:-}" ]; then
    FSLAB="$root/target/release/fslab"
    (cd "$root" && cargo build --release -q -p fslab) || die "cannot build fslab"
fi
[ -x "$FSLAB" ] || die "no fslab binary at $FSLAB"

work=$(mktemp -d /tmp/fslab-dbench-bench.XXXXXX)
mounts=()
cleanup() {
    local m
    for m in "${mounts[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

# mount_fs FS: mounts a fresh filesystem of type FS under $work, at $mnt.
mount_fs() {
    mnt="$work/$1"
    mkdir -p "$mnt"
    case "$1" in
    tmpfs) mount -t tmpfs -o size="$IMAGE_SIZE" fslab-bench "$mnt" ;;
    ext4)
        truncate -s "$IMAGE_SIZE" "$work/ext4.img"
        # No lazy inode-table or journal initialisation: it would run in the background during
        # the first tool's run.
        mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$work/ext4.img"
        mount -o loop "$work/ext4.img" "$mnt"
        ;;
    *) die "unknown filesystem $1 (tmpfs or ext4)" ;;
    esac
    mounts+=("$mnt")
}

# op_counts FILE: "name count" for each row of a dbench-style operation table.
op_counts() {
    awk '/^ Operation +Count/ {t=1; next} t && /^ -+$/ {next} t && NF==0 {exit} t {print $1, $2}' "$1"
}

# throughput FILE: the figure of the Throughput line.
throughput() {
    awk '/^Throughput / {print $2; exit}' "$1"
}

quiesce() {
    sync
    echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true
}

# compare LABEL DBENCH_OUT FSLAB_OUT: the shares table and the throughput ratio.
compare() {
    local label=$1 d=$2 f=$3
    echo "== $label"
    join -a1 -a2 -e 0 -o 0,1.2,2.2 <(op_counts "$d" | sort) <(op_counts "$f" | sort) |
        awk -v worst_file="$work/worst" '
        { name[NR]=$1; d[NR]=$2; f[NR]=$3; td+=$2; tf+=$3; n=NR }
        END {
            printf "%-12s %10s %10s %9s %9s %8s\n", "operation", "dbench", "fslab", "dbench%", "fslab%", "diff pp"
            worst=0
            for (i=1;i<=n;i++) {
                sd = td ? 100*d[i]/td : 0; sf = tf ? 100*f[i]/tf : 0; diff = sf - sd
                a = diff < 0 ? -diff : diff; if (a > worst) worst = a
                printf "%-12s %10d %10d %8.2f%% %8.2f%% %+8.2f%s\n", name[i], d[i], f[i], sd, sf, diff, (a > 1 ? "  > 1 pp" : "")
            }
            printf "%-12s %10d %10d\n", "total", td, tf
            printf "largest share difference: %.2f pp (goal: within 1 pp)\n", worst
        }'
    # Every pair's Throughput figures, "dbench fslab" a line, in $work/pairs.
    awk -v fs="${label%% *}" '{
        r[NR] = $1 > 0 ? $2 / $1 : 0
        printf "Throughput, pair %d: dbench %.3f MB/sec, fslab %.3f MB/sec, ratio fslab/dbench %.3f\n", NR, $1, $2, r[NR]
    } END {
        # The median ratio.
        for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
        m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
        goal = fs == "tmpfs" ? ">= 1.0" : "0.95-1.05"
        ok = fs == "tmpfs" ? (m >= 1.0) : (m >= 0.95 && m <= 1.05)
        printf "Throughput ratio fslab/dbench (median of %d): %.3f (goal %s: %s)\n", NR, m, goal, ok ? "met" : "NOT met"
    }' "$work/pairs"
    awk '/^Mean / {print "fslab mean over the execute phase: " $2 " MB/sec"}' "$f"
    echo
}

echo "dbench $(dbench --help 2>&1 | head -1 | awk '{print $3}') vs $("$FSLAB" --version): client.txt, T=$T s (+ T/5 warm-up), clients: $NPROCS, $REPEAT pair(s) each"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs (other work on the machine skews the ratios)"
echo
for fs in $FS; do
    mount_fs "$fs"
    for n in $NPROCS; do
        d_out="$work/dbench-$fs-$n.out"
        f_out="$work/fslab-$fs-$n.out"
        : >"$work/pairs"
        for r in $(seq "$REPEAT"); do
            if [ $((r % 2)) -eq 1 ]; then order="dbench fslab"; else order="fslab dbench"; fi
            for tool in $order; do
                quiesce
                mkdir -p "$mnt/$tool"
                if [ "$tool" = dbench ]; then
                    dbench -D "$mnt/$tool" -t "$T" "$n" >"$d_out" 2>&1 || { cat "$d_out" >&2; die "dbench failed"; }
                else
                    "$FSLAB" dbench -D "$mnt/$tool" -t "$T" "$n" >"$f_out" 2>&1 || { cat "$f_out" >&2; die "fslab dbench failed"; }
                fi
                rm -rf "${mnt:?}/$tool"
            done
            echo "$(throughput "$d_out") $(throughput "$f_out")" >>"$work/pairs"
            if [ -n "${KEEP_LOGS:-}" ]; then
                mkdir -p "$KEEP_LOGS"
                cp "$d_out" "$KEEP_LOGS/dbench-$fs-$n-$r.out"
                cp "$f_out" "$KEEP_LOGS/fslab-$fs-$n-$r.out"
            fi
        done
        compare "$fs $n clients" "$d_out" "$f_out"
    done
done
