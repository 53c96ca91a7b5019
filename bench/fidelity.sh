#!/usr/bin/env bash
# bench/fidelity.sh: does each classic front-end put the same load on the filesystem as its
# original? Two parts, in one go:
#
#  1. System calls. Each original and its fslab front-end run the same small job, each in a fresh
#     directory of one tmpfs, under `strace -f -y`; the counts of each class of call (opens, stats,
#     dirents, locks, unlink, rename, mkdir, rmdir, fsync, seeks, reads, writes) are printed per
#     100 reads+writes side by side, with their ratio (goal: every class within 10%). Only the
#     calls on that tmpfs count (and those that name no file): not a tool's reads of its own input
#     (dbench's loadfile, FFSB's profile), its writes to stdout, its libraries or /proc. sysbench's
#     prepare is also compared in absolute counts (goal: writes and fsyncs within 5%).
#  2. Headlines. The same jobs, longer, on a fresh ext4 loop image per run (mkfs before every run)
#     and on a tmpfs, the original and fslab alternating, ROUNDS rounds: the medians, spreads and
#     the median of the paired ratios fslab/original (goal: within 5% where the run is
#     disk-bound, >= 1.0 where it is CPU-bound; PASS or MISS only when a 90% interval of that
#     median says so, bench/settle.py, else UNSETTLED). Which it is, is measured rather than assumed
#     from the filesystem: disk-bound when some task waited on I/O for at least half of the
#     original's time (the kernel's pressure stall information, /proc/pressure/io `some`,
#     median of the rounds; a tmpfs never is); how long some task waited for a processor is
#     printed beside it (/proc/pressure/cpu), since a run can be both. An ext4 image whose blocks the page cache holds
#     can be either: here dbench's 1 client waited 25% of its time on ext4 (43% on ext4-disk
#     with `-s`), sysbench's rndrw with its fsyncs 53%. For IOzone also its automatic mode
#     (`-a -n 64k -g 16m -i 0 -i 1`) on a tmpfs: per file size, the median over record sizes of
#     each column's ratio fslab/IOzone (medians of the rounds).
#
#  3. Output. Each original's text and fslab's for the same small jobs on one tmpfs, every number
#     masked so that only the layout is compared (widths aside), diffed line by line: dbench,
#     sysbench's prepare, runs (async mode too) and cleanup, FFSB, and a dozen IOzone command lines (throughput
#     and automatic mode, -R, -C, -O, -T, -E, the mixed workload). Also masked: what fslab
#     deliberately adds or changes (its version line, its figures after the original's report), and what
#     differs from run to run (IOzone's start time and command line, each tool's directory).
#
#   sudo bench/fidelity.sh                        # dbench and sysbench (Debian's packages)
#   sudo FFSB=/tmp/ffsb/ffsb IOZONE=/tmp/iozone/iozone bench/fidelity.sh dbench sysbench ffsb iozone
#   sudo PART=syscalls bench/fidelity.sh dbench   # only part 1
#   sudo PART=output IOZONE=/tmp/iozone/iozone bench/fidelity.sh iozone   # only part 3
#
# FFSB and IOzone are not packaged: build them from source in a scratch directory outside this
# repository (FFSB 5.2.1 is the first commit of github.com/jrsantos/FFSB; IOzone 3.487 builds
# with CFLAGS=-fcommon) and name the binaries in FFSB and IOZONE.
#
# Environment: PART (syscalls, headlines, output; both for the first two, or all [all]),
# ROUNDS (3), T (10: seconds of each headline run; the syscall runs take 5), CLIENTS (dbench's clients in the headline runs [1 4]),
# IMAGE_SIZE (4G, the sparse ext4 image, and the tmpfs's size), FILESYSTEMS (where the headline
# runs go [ext4 tmpfs]; ext4-disk is ext4 on a loop device in direct I/O, disk-bound with
# DBENCH_OPTS=-s, dbench's synchronous opens, since a 24 GiB page cache holds the rest),
# DBENCH_OPTS and SYSBENCH_OPTS (more options for both dbenches or sysbenches:
# SYSBENCH_OPTS=--file-extra-flags=direct is disk-bound on ext4-disk; with
# SYSBENCH_OPTS=--file-io-mode=async each io_submit() counts as a read or write), FFSB_DIRECTIO (1: FFSB's profile reads and
# writes with O_DIRECT, disk-bound on ext4-disk), FFSB_GRAMMAR (5, or 6 for FFSB 6.0's grammar and a
# 6.0 binary; the output part then compares the profile with [stats] too), FFSB_STATS (1: the 6.0
# profile times every system call, [stats]), FSLAB (the binary; default target/release/fslab, built
# when missing), KEEP (a directory to copy every raw output to).
# Exit: 0 when everything ran (goals met, missed or unsettled), 1 when a run failed, 3 when
# something is missing.
set -uo pipefail

PART=${PART:-all}
case $PART in
syscalls | headlines | output | both | all) ;;
*) echo "bench/fidelity.sh: PART is syscalls, headlines, output, both or all" >&2 && exit 3 ;;
esac
# Each IOzone child's file in the headline runs, MiB (the issue's -s 256m).
IOZONE_MB=256
ROUNDS=${ROUNDS:-3}
T=${T:-10}
CLIENTS=${CLIENTS:-"1 4"}
IMAGE_SIZE=${IMAGE_SIZE:-4G}
FILESYSTEMS=${FILESYSTEMS:-"ext4 tmpfs"}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
TOOLS=("$@")
((${#TOOLS[@]})) || TOOLS=(dbench sysbench)

die() { echo "bench/fidelity.sh: $*" >&2; exit "${2:-3}"; }
[[ $(id -u) -eq 0 ]] || die "needs root (mount, loop devices)"
for t in strace python3 mkfs.ext4 losetup; do
    command -v "$t" >/dev/null || die "needs $t"
done
for tool in "${TOOLS[@]}"; do
    case $tool in
    dbench)
        command -v dbench >/dev/null && [[ -f /usr/share/dbench/client.txt ]] ||
            die "needs dbench and /usr/share/dbench/client.txt (apt-get install dbench)" ;;
    sysbench) command -v sysbench >/dev/null || die "needs sysbench (apt-get install sysbench)" ;;
    ffsb) [[ -x ${FFSB:-} ]] || die "ffsb: set FFSB to an ffsb binary built from source" ;;
    iozone) [[ -x ${IOZONE:-} ]] || die "iozone: set IOZONE to an iozone binary built from source" ;;
    *) die "unknown tool $tool (dbench, sysbench, ffsb, iozone)" ;;
    esac
done
if [[ -z ${FSLAB:-} ]]; then
    FSLAB=$root/target/release/fslab
    (cd "$root" && cargo build --release -q -p fslab) || die "cannot build fslab"
fi
[[ -x $FSLAB ]] || die "no fslab binary at $FSLAB"

work=$(mktemp -d /tmp/fslab-fidelity.XXXXXX)
mnt=$work/mnt
mkdir -p "$mnt" "$work/out"
cleanup() {
    cd /
    if mountpoint -q "$mnt"; then umount "$mnt" 2>/dev/null || umount -l "$mnt"; fi
    if [[ -n ${loopdev:-} ]]; then losetup -d "$loopdev" 2>/dev/null; fi
    if [[ -n ${KEEP:-} ]]; then mkdir -p "$KEEP" && cp -f "$work"/out/* "$KEEP"/ 2>/dev/null; fi
    rm -rf "$work"
    release_reporting
}
# shellcheck source=bench/reporting.sh
source "$here/reporting.sh"
trap cleanup EXIT
trap 'echo "bench/fidelity.sh: interrupted" >&2; exit 130' INT TERM

# mount_fresh FS: a new, empty filesystem of type FS at $mnt: tmpfs; ext4 on a loop device over
# a sparse image (whose blocks the host's page cache holds: the run is rarely disk-bound); or
# ext4-disk, the same with the loop device in direct I/O (losetup --direct-io=on), so that every
# block the filesystem writes back or reads goes to the disk under /tmp. The image is made again
# every time, so no run inherits another's layout.
mount_fresh() {
    if mountpoint -q "$mnt"; then umount "$mnt" || die "cannot unmount $mnt" 1; fi
    if [[ -n ${loopdev:-} ]]; then losetup -d "$loopdev"; loopdev=; fi
    rm -f "$work/ext4.img"
    sync
    echo 3 >/proc/sys/vm/drop_caches
    case $1 in
    tmpfs) mount -t tmpfs -o size="$IMAGE_SIZE" fslab-fidelity "$mnt" ;;
    ext4 | ext4-disk)
        truncate -s "$IMAGE_SIZE" "$work/ext4.img"
        # No lazy initialisation: it would write in the background during the run.
        local direct=off
        [[ $1 == ext4-disk ]] && direct=on
        mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$work/ext4.img" &&
            loopdev=$(losetup --find --show --direct-io="$direct" "$work/ext4.img") &&
            mount "$loopdev" "$mnt"
        ;;
    *) die "unknown filesystem $1 (tmpfs, ext4, ext4-disk)" ;;
    esac || die "cannot mount a fresh $1 at $mnt" 1
}

# Each tool's job: job_TOOL KIND DIR LOG runs the original (KIND original) or fslab (KIND fslab)
# in DIR, its output to LOG; prefix it with `strace -f -y -o FILE` through $WRAP.
WRAP=()
job_dbench() { # kind dir log [seconds] [clients]
    local kind=$1 dir=$2 log=$3 t=${4:-5} n=${5:-1} cmd=(dbench)
    [[ $kind == fslab ]] && cmd=("$FSLAB" dbench)
    # shellcheck disable=SC2086 # DBENCH_OPTS is a list of options
    "${WRAP[@]}" "${cmd[@]}" ${DBENCH_OPTS:-} -D "$dir" -t "$t" "$n" >"$log" 2>&1
}
SYSBENCH_ARGS=(--file-num=4 --file-total-size=64M)
# shellcheck disable=SC2206 # more options, split as words on purpose
SYSBENCH_ARGS+=(${SYSBENCH_OPTS:-})
job_sysbench() { # kind dir log phase [seconds]
    local kind=$1 dir=$2 log=$3 phase=$4 t=${5:-5} cmd=(sysbench)
    [[ $kind == fslab ]] && cmd=("$FSLAB" sysbench)
    (cd "$dir" && "${WRAP[@]}" "${cmd[@]}" "${SYSBENCH_ARGS[@]}" --file-test-mode=rndrw \
        --time="$t" fileio "$phase") >"$log" 2>&1
}
job_ffsb() { # kind dir log [seconds]
    local kind=$1 dir=$2 log=$3 t=${4:-5} cmd=("$FFSB")
    [[ $kind == fslab ]] && cmd=("$FSLAB" ffsb)
    # A small file-server profile, its fileset in DIR, in FFSB 5.x's grammar or, with
    # FFSB_GRAMMAR=6, in 6.0's with two of 6.0's operations more (stat, writeall). Fewer deletes
    # than creates: FFSB aborts (an assertion in choose_file_reader) once every file is gone;
    # small files, so that what the creates add fits IMAGE_SIZE at a tmpfs's speed. With
    # O_DIRECT every file is 16 KiB, so that every transfer stays block-aligned.
    local min_size=4096 head=$'num_filesystems=1\nnum_threadgroups=1\n' fs=filesystem0 end=end0
    local tg=threadgroup0 more="" stats=""
    [[ ${FFSB_DIRECTIO:-0} == 1 ]] && min_size=16384
    if [[ ${FFSB_GRAMMAR:-5} == 6 ]]; then
        head="" fs=filesystem end=end tg=threadgroup more=$'\tstat_weight=2\n\twriteall_weight=1\n'
        # FFSB_CREATEDIR=1: 6.0's createdir too, whose directories later creates fill.
        [[ ${FFSB_CREATEDIR:-0} == 1 ]] && more+=$'\tcreatedir_weight=1\n'
        # FFSB_STATS=1: 6.0's [stats], each system call timed, its latencies counted in ranges.
        [[ ${FFSB_STATS:-0} == 1 ]] && stats=$'\t[stats]\n\t\tenable_stats=1\n\t\tenable_range=1\n\t\tmsec_range 0.00 0.01\n\t\tmsec_range 0.01 0.10\n\t\tmsec_range 0.10 1000.00\n\t[end]\n'
        # 6.0's parser copies `location` without its terminating NUL (get_optstr: malloc(len),
        # strncpy), so the byte after it is whatever the heap holds there: past the allocation
        # when the length is a multiple of 8 (a 24-byte location came out with a stray byte).
        # A trailing slash moves it off one.
        ((${#dir} % 8 == 0)) && dir+=/
    fi
    cat >"$work/profile.ffsb" <<EOF
${head}directio=${FFSB_DIRECTIO:-0}
time=$t

[$fs]
	location=$dir
	num_files=2000
	num_dirs=20
	max_filesize=16384
	min_filesize=$min_size
[$end]

[$tg]
	num_threads=4
	read_weight=8
	readall_weight=2
	write_weight=2
	create_weight=2
	append_weight=2
	delete_weight=1
${more}	write_size=4096
	write_blocksize=4096
	read_size=4096
	read_blocksize=4096
${stats}[$end]
EOF
    "${WRAP[@]}" "${cmd[@]}" "$work/profile.ffsb" >"$log" 2>&1
}
# IOzone throughput mode: writers, readers, random readers and writers, and the mixed workload.
job_iozone() { # kind dir log [size]
    local kind=$1 dir=$2 log=$3 size=${4:-64m} cmd=("$IOZONE")
    [[ $kind == fslab ]] && cmd=("$FSLAB" iozone)
    (cd "$dir" && "${WRAP[@]}" "${cmd[@]}" -i 0 -i 1 -i 2 -i 8 -t 4 -s "$size" -r 64k -e -C -w) >"$log" 2>&1
}

# The headline figure of a tool's output.
headline() { # tool log
    case $1 in
    dbench) awk '/^Throughput / {print $2; exit}' "$2" ;;
    sysbench) awk '/read, MiB\/s:/ {r=$3} /written, MiB\/s:/ {w=$3} END {if (r != "") print r + w}' "$2" ;;
    ffsb) awk '/Transactions per Second/ {print $1; exit}' "$2" ;;
    iozone) awk -F'=' '/Children see throughput for .* initial writers/ {split($2, a, " "); print a[1]; exit}' "$2" ;;
    esac
}
headline_name() {
    case $1 in
    dbench) echo "Throughput, MB/sec" ;;
    sysbench) echo "read + written, MiB/s (rndrw)" ;;
    ffsb) echo "Transactions per Second" ;;
    iozone) echo "Children see, initial writers, kB/sec" ;;
    esac
}

# work_calls LOG: the calls of an `strace -f -y` log made on the files beneath $mnt, by name, into
# LOG.calls ("name count" lines). A call counts when a descriptor it passes is open beneath $mnt
# (strace -y prints its path); or else when the path it names is beneath $mnt, or relative and
# not resolved from a descriptor elsewhere (the tools work in their directory); or when it names
# no file at all (sync). Each call counts once: a call that another thread's interrupted counts
# where it starts, not where it resumes.
work_calls() {
    python3 - "$1" "$mnt" <<'EOF'
import re, sys
log, mnt = sys.argv[1], sys.argv[2].rstrip("/") + "/"
call = re.compile(r"^(?:\d+ +)?(\w+)\((.*)")
fd = re.compile(r"\d+<([^>]*)>")
path = re.compile(r'"((?:[^"\\]|\\.)*)"')
calls = {}
for line in open(log):
    m = call.match(line)
    if not m:
        continue  # a resumed call, a signal, an exit
    name, args = m.groups()
    fds = fd.findall(args)
    named = path.search(args)
    if any(p.startswith(mnt) for p in fds):
        mine = True
    elif named:
        p = named.group(1)
        mine = p.startswith(mnt) or (not p.startswith("/") and not fds)
    else:
        mine = not fds
    if mine:
        calls[name] = calls.get(name, 0) + 1
with open(log + ".calls", "w") as out:
    for name, n in sorted(calls.items()):
        print(name, n, file=out)
EOF
}

# profile_table TOOL ORIGINAL_STRACE FSLAB_STRACE: each class of call per 100 reads+writes.
profile_table() {
    python3 - "$@" <<'EOF'
import sys
tool, orig, fslab = sys.argv[1:4]
CLASSES = [
    ("open", {"open", "openat", "openat2", "creat"}),
    ("stat", {"stat", "lstat", "fstat", "newfstatat", "statx", "statfs", "fstatfs"}),
    ("dirents", {"getdents", "getdents64"}),
    ("locks", {"fcntl", "flock"}),
    ("unlink", {"unlink", "unlinkat"}),
    ("rename", {"rename", "renameat", "renameat2"}),
    ("mkdir", {"mkdir", "mkdirat"}),
    ("rmdir", {"rmdir"}),
    ("fsync", {"fsync", "fdatasync", "sync_file_range", "sync", "syncfs"}),
    ("seek", {"lseek"}),
    ("read", {"read", "pread64", "readv", "preadv", "preadv2"}),
    ("write", {"write", "pwrite64", "writev", "pwritev", "pwritev2"}),
    # sysbench's --file-io-mode=async: each io_submit() a read or a write of one request.
    ("aio", {"io_submit"}),
    ("aio-reap", {"io_getevents", "io_pgetevents"}),
    ("io_uring", {"io_uring_enter"}),
]

def counts(path):
    c = {}
    for line in open(path + ".calls"):
        name, n = line.split()
        c[name] = int(n)
    by_class = {name: sum(c.get(s, 0) for s in calls) for name, calls in CLASSES}
    return by_class, max(1, by_class["read"] + by_class["write"] + by_class["aio"])

(o, on), (f, fn) = counts(orig), counts(fslab)
print(f"  {'class':<8} {'original':>10} {'fslab':>10} {'ratio':>7}   (calls per 100 reads+writes; raw reads+writes: {on} and {fn})")
worst = 0.0
for name, _ in CLASSES:
    a, b = 100 * o[name] / on, 100 * f[name] / fn
    if a == 0 and b == 0:
        continue
    ratio = b / a if a else float("inf")
    off = abs(ratio - 1)
    # Below half a call per 100 reads+writes, a class is start-up and set-up (libraries, the
    # output, the working directory), not the workload: shown, not judged.
    judged = max(a, b) >= 0.5
    if judged:
        worst = max(worst, off)
    mark = "   > 10%" if judged and off > 0.10 else ("" if judged else "   (set-up: not judged)")
    print(f"  {name:<8} {a:10.2f} {b:10.2f} {ratio:7.2f}{mark}")
print(f"  largest difference among the classes judged: {100 * worst:.0f}% (goal: every class within 10%)")
EOF
}

# Part 1: the system calls of one job, the original's and fslab's, on one tmpfs.
syscalls() { # tool
    local tool=$1 kind log
    echo "== $tool: system calls on a tmpfs"
    mount_fresh tmpfs
    for kind in original fslab; do
        mkdir -p "$mnt/$kind"
        if [[ $tool == sysbench ]]; then
            WRAP=(strace -f -qq -y -o "$work/out/$tool-prepare-$kind.strace")
            job_sysbench "$kind" "$mnt/$kind" "$work/out/$tool-prepare-$kind.log" prepare ||
                die "$kind sysbench prepare failed: $(tail -3 "$work/out/$tool-prepare-$kind.log")" 1
            WRAP=(strace -f -qq -y -o "$work/out/$tool-$kind.strace")
            job_sysbench "$kind" "$mnt/$kind" "$work/out/$tool-$kind.log" run
        else
            WRAP=(strace -f -qq -y -o "$work/out/$tool-$kind.strace")
            "job_$tool" "$kind" "$mnt/$kind" "$work/out/$tool-$kind.log"
        fi || die "$kind $tool failed: $(tail -3 "$work/out/$tool-$kind.log")" 1
        WRAP=()
        for log in "$work/out/$tool"-{prepare-,}"$kind.strace"; do
            [[ -f $log ]] && { work_calls "$log" || die "cannot count the calls in $log" 1; }
        done
    done
    if [[ $tool == sysbench ]]; then
        echo "  prepare (${SYSBENCH_ARGS[*]}), absolute counts (goal: writes and fsyncs within 5%):"
        python3 - "$work/out/$tool-prepare-original.strace" "$work/out/$tool-prepare-fslab.strace" <<'EOF'
import sys
def n(path, names):
    return sum(int(c) for name, c in (line.split() for line in open(path + ".calls")) if name in names)
for label, names in [("writes", {"write", "pwrite64", "writev", "pwritev"}), ("fsyncs", {"fsync", "fdatasync"})]:
    a, b = n(sys.argv[1], names), n(sys.argv[2], names)
    off = abs(b / a - 1) if a else (0 if b == 0 else 1)
    print(f"    {label:<7} original {a:6}  fslab {b:6}{'   > 5%' if off > 0.05 else ''}")
EOF
        echo "  run (rndrw, 5 s):"
    fi
    profile_table "$tool" "$work/out/$tool-original.strace" "$work/out/$tool-fslab.strace"
    echo
}

# Microseconds some task has waited on I/O (or, with `cpu`, for a processor) since boot (PSI's
# `some` total), or nothing when the kernel keeps no pressure figures.
io_stall_us() { sed -n 's/^some .*total=\([0-9]*\)$/\1/p' "/proc/pressure/${1:-io}" 2>/dev/null; }
now_us() { echo $(($(date +%s%N) / 1000)); }

# Part 2: the headline of each job, alternating, on a fresh filesystem per run.
headlines() { # tool fs [clients]
    local tool=$1 fs=$2 n=${3:-} r kind order log v orig=() mine=() stalls=() waits=() s0 c0 t0
    echo "== $tool${n:+ $n clients} on $fs: $(headline_name "$tool"), $ROUNDS rounds"
    for r in $(seq "$ROUNDS"); do
        order="original fslab"
        ((r % 2 == 0)) && order="fslab original"
        for kind in $order; do
            mount_fresh "$fs"
            mkdir -p "$mnt/$kind"
            log=$work/out/$tool-$fs${n:+-$n}-$r-$kind.log
            if [[ $tool == sysbench ]]; then
                job_sysbench "$kind" "$mnt/$kind" "$log.prepare" prepare &&
                    sync && echo 3 >/proc/sys/vm/drop_caches ||
                    die "$kind sysbench prepare failed: $(tail -3 "$log.prepare")" 1
            fi
            s0=$(io_stall_us) c0=$(io_stall_us cpu) t0=$(now_us)
            case $tool in
            dbench) job_dbench "$kind" "$mnt/$kind" "$log" "$T" "$n" ;;
            sysbench) job_sysbench "$kind" "$mnt/$kind" "$log" run "$T" ;;
            ffsb) job_ffsb "$kind" "$mnt/$kind" "$log" "$T" ;;
            iozone) job_iozone "$kind" "$mnt/$kind" "$log" "${IOZONE_MB}m" ;;
            esac || die "$kind $tool failed: $(tail -3 "$log")" 1
            if [[ $kind == original && -n $s0 ]]; then
                stalls+=("$(awk -v s="$(($(io_stall_us) - s0))" -v t="$(($(now_us) - t0))" 'BEGIN {print s / t}')")
                waits+=("$(awk -v s="$(($(io_stall_us cpu) - c0))" -v t="$(($(now_us) - t0))" 'BEGIN {print s / t}')")
            fi
            v=$(headline "$tool" "$log")
            [[ -n $v ]] || die "no headline figure in $log" 1
            if [[ $kind == original ]]; then orig+=("$v"); else mine+=("$v"); fi
        done
    done
    python3 - "$fs" "${orig[*]}" "${mine[*]}" "${stalls[*]}" "$here" "${waits[*]}" <<'EOF'
import sys, statistics as st
sys.path.insert(0, sys.argv[5])
from settle import at_least, within
fs, o, f = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
stalls = [float(x) for x in sys.argv[4].split()]
spread = lambda a: 100 * (max(a) - min(a)) / st.median(a)
r = [b / a for a, b in zip(o, f)]
m = st.median(r)
print(f"  original: median {st.median(o):.2f} (spread {spread(o):.0f}%)   fslab: median {st.median(f):.2f} (spread {spread(f):.0f}%)")
if fs == "tmpfs":
    disk, why = False, "a tmpfs"
elif stalls:
    stall = st.median(stalls)
    disk, why = stall >= 0.5, f"some task waited on I/O for {100 * stall:.0f}% of the original's time"
    waits = [float(x) for x in sys.argv[6].split()]
    if waits:
        why += f", and for a processor for {100 * st.median(waits):.0f}%"
else:
    disk, why = True, "taken so: no /proc/pressure/io to measure it"
print(f"  {'disk' if disk else 'CPU'}-bound: {why}")
goal, (verdict, iv) = ("0.95-1.05", within(r, 0.95, 1.05)) if disk else (">= 1.0", at_least(r, 1.0))
print(f"  ratio fslab/original, median of the pairs: {m:.3f} [{min(r):.3f}-{max(r):.3f}]   goal {goal}: {verdict}")
if iv:
    print(f"  the pairs' median is in [{iv[0]:.3f}, {iv[1]:.3f}] with {100 * iv[2]:.1f}% confidence (bench/settle.py)")
else:
    print("  too few rounds for a 90% interval of the pairs' median (5 at least)")
EOF
    [[ $tool == iozone ]] && iozone_detail "$fs"
    echo
}

# Each sub-test of IOzone's throughput runs on FS (the logs `headlines` kept): the medians over
# the rounds of Children see and Parent sees (kB/sec) and of Min xfer as a share of the file, the
# original's and fslab's side by side. Min xfer shows where the stonewall stopped the slowest
# child: 100% is no stonewall.
iozone_detail() { # fs
    python3 - "$work/out" "$1" "$ROUNDS" $((IOZONE_MB * 1024)) <<'EOF'
import re, sys, statistics as st
out, fs, rounds, file_kb = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
def parse(path):
    tests, cur = {}, None
    for line in open(path, errors="replace"):
        m = re.search(r"(Children see|Parent sees) throughput for\s+\d+\s+(.+?)\s*=\s*([\d.]+)", line)
        if m:
            cur = m.group(2).strip()
            tests.setdefault(cur, {})["children" if m.group(1) == "Children see" else "parent"] = float(m.group(3))
        m = re.search(r"Min xfer\s*=\s*([\d.]+)", line)
        if m and cur:
            tests[cur]["min_xfer"] = 100 * float(m.group(1)) / file_kb
    return tests
runs = {k: [parse(f"{out}/iozone-{fs}-{r}-{k}.log") for r in range(1, rounds + 1)] for k in ("original", "fslab")}
med = lambda k, t, f: st.median(x[t].get(f, float("nan")) for x in runs[k] if t in x)
print(f"  {'sub-test':<22} {'children: IOzone':>16} {'fslab':>12} {'ratio':>6}  {'parent: IOzone':>14} {'fslab':>12} {'ratio':>6}  {'min xfer: IOzone':>16} {'fslab':>6}")
for t in runs["original"][0]:
    c = (med("original", t, "children"), med("fslab", t, "children"))
    p = (med("original", t, "parent"), med("fslab", t, "parent"))
    x = (med("original", t, "min_xfer"), med("fslab", t, "min_xfer"))
    print(f"  {t:<22} {c[0]:>16,.0f} {c[1]:>12,.0f} {c[1] / c[0]:>6.2f}  {p[0]:>14,.0f} {p[1]:>12,.0f} {p[1] / p[0]:>6.2f}  {x[0]:>15.0f}% {x[1]:>5.0f}%")
EOF
}

# IOzone's automatic mode, alternating, on one tmpfs: each column's ratio per file size.
iozone_auto() {
    local r kind order
    echo "== iozone automatic mode (-a -n 64k -g 16m -i 0 -i 1) on tmpfs, $ROUNDS rounds"
    mount_fresh tmpfs
    for r in $(seq "$ROUNDS"); do
        order="original fslab"
        ((r % 2 == 0)) && order="fslab original"
        for kind in $order; do
            mkdir -p "$mnt/$kind"
            job_iozone_auto "$kind" "$mnt/$kind" "$work/out/iozone-auto-$r-$kind.log" ||
                die "$kind iozone -a failed: $(tail -3 "$work/out/iozone-auto-$r-$kind.log")" 1
        done
    done
    python3 - "$work/out" "$ROUNDS" <<'EOF'
import sys, statistics as st
out, rounds = sys.argv[1], int(sys.argv[2])
def table(kind):
    rows = {}
    for r in range(1, rounds + 1):
        for line in open(f"{out}/iozone-auto-{r}-{kind}.log"):
            f = line.split()
            if len(f) >= 4 and all(x.isdigit() for x in f):
                rows.setdefault((int(f[0]), int(f[1])), []).append([int(x) for x in f[2:]])
    return {k: [st.median(c) for c in zip(*v)] for k, v in rows.items()}
o, m = table("original"), table("fslab")
cols = ["write", "rewrite", "read", "reread"]
print("  file kB   " + "".join(f"{c:>9}" for c in cols) + "   (median over record sizes of fslab/IOzone)")
for size in sorted({k[0] for k in o}):
    keys = [k for k in o if k[0] == size and k in m]
    ratios = [st.median(m[k][c] / o[k][c] for k in keys if o[k][c]) for c in range(len(cols))]
    print(f"  {size:>7}   " + "".join(f"{x:>9.2f}" for x in ratios))
EOF
    echo
}
job_iozone_auto() { # kind dir log
    local kind=$1 dir=$2 log=$3 cmd=("$IOZONE")
    [[ $kind == fslab ]] && cmd=("$FSLAB" iozone)
    (cd "$dir" && "${cmd[@]}" -a -n 64k -g 16m -i 0 -i 1) >"$log" 2>&1
}

# 3. The text of TOOL's original and fslab for ARGS, each in its own directory of one tmpfs
# (emptied first unless KEEP_DIRS=1), with every number masked: prints SAME or the lines that
# differ.
compare_output() { # tool args...
    local tool=$1 kind
    shift
    for kind in original fslab; do
        [[ ${KEEP_DIRS:-0} == 1 ]] || rm -rf "${mnt:?}/$kind"
        mkdir -p "$mnt/$kind"
        local cmd=()
        case $tool in
        dbench) cmd=(dbench -D "$mnt/$kind") ;;
        sysbench) cmd=(sysbench) ;;
        ffsb) cmd=("$FFSB") ;;
        iozone) cmd=("$IOZONE") ;;
        esac
        local more=()
        if [[ $kind == fslab ]]; then
            cmd=("$FSLAB" "$tool" "${cmd[@]:1}")
            [[ $tool == iozone ]] && more=(--pause 0)
        fi
        (cd "$mnt/$kind" && "${cmd[@]}" "$@" "${more[@]}") >"$work/out/text-$kind.log" 2>/dev/null
    done
    compare_texts "$tool" "$*"
}
# Compares text-original.log and text-fslab.log of TOOL, run with ARGS (a label), numbers masked.
compare_texts() { # tool label
    python3 - "$1" "$work/out/text-original.log" "$work/out/text-fslab.log" "$2" "$mnt" <<'EOF'
import difflib, re, sys
tool, original, fslab, args, mnt = sys.argv[1:]
def text(path, ours):
    lines = open(path, errors="replace").read().split("\n")
    extras = [k for k, l in enumerate(lines) if l.startswith("--- fslab")]
    if ours and extras:
        # fslab's own figures after the original's report (the blank line before them stands
        # for the end of the original's last line).
        lines = lines[: extras[0]]
    if tool == "sysbench" and lines:
        lines = lines[1:]  # the version line: "sysbench 1.0.20 (...)", "fslab 0.1.0 (sysbench ...)"
    out = []
    # FFSB 6.0's createdir prints `dirnum: N` from its threads as it goes, some before or
    # after the main thread's lines as they race: the rows count as one, at the end.
    dirnums = [l for l in lines if l.startswith("dirnum: ")]
    lines = [l for l in lines if not l.startswith("dirnum: ")] + (["DIRNUM ROWS"] if dirnums else [])
    for l in lines:
        l = re.sub(r"^(\t(Command line used|Run began):).*", r"\1", l)
        l = l.replace(f"{mnt}/original", "DIR").replace(f"{mnt}/fslab", "DIR")
        l = re.sub(r" *[0-9]+(\.[0-9]+)?", " N", l)
        # sysbench's histogram: as many rows as slots were hit, so the rows count as one.
        if re.fullmatch(r" N \|[* ]* N", l):
            if out and out[-1] == "HISTOGRAM ROWS":
                continue
            l = "HISTOGRAM ROWS"
        out.append(l)
    return out
a, b = text(original, False), text(fslab, True)
diff = [d for d in difflib.unified_diff(a, b, "original", "fslab", n=0, lineterm="")]
print(f"  {'DIFFERENT' if diff else 'SAME'}: {tool} {args}")
for d in [d for d in diff[2:] if not d.startswith("@@")][:20]:
    print("      " + d.replace("\t", "\\t"))
EOF
}
outputs() { # tool
    local tool=$1
    echo "== $tool: the text, numbers masked"
    mount_fresh tmpfs
    case $tool in
    dbench) compare_output dbench -t 3 2 ;;
    sysbench)
        local a=(fileio --file-num=4 --file-total-size=16M) mode
        compare_output sysbench "${a[@]}" prepare
        for mode in rndrw seqrd seqwr; do
            KEEP_DIRS=1 compare_output sysbench "${a[@]}" --file-test-mode=$mode --time=1 run
        done
        for mode in rndrw seqrd; do
            KEEP_DIRS=1 compare_output sysbench "${a[@]}" --file-io-mode=async --file-test-mode=$mode --time=1 run
        done
        KEEP_DIRS=1 compare_output sysbench "${a[@]}" --file-test-mode=rndrd --time=1 --histogram run
        KEEP_DIRS=1 compare_output sysbench "${a[@]}" --file-test-mode=rndwr --threads=2 --events=500 --time=0 --verbosity=4 run
        KEEP_DIRS=1 compare_output sysbench "${a[@]}" --file-test-mode=rndrd --time=1 --verbosity=1 run
        KEEP_DIRS=1 compare_output sysbench "${a[@]}" --file-test-mode=rndwr --rate=500 --threads=2 --time=1 run
        # A rate no thread keeps up with: both stop at a full event queue.
        KEEP_DIRS=1 compare_output sysbench "${a[@]}" --file-test-mode=rndrd --rate=100000000 --time=3 run
        # --validate: checked blocks prepared (after a cleanup: prepare keeps files of the right
        # size as they are), then read and written by two threads; then a sequential read of
        # the blocks a seqwr without --validate left, at which both stop.
        KEEP_DIRS=1 compare_output sysbench "${a[@]}" cleanup
        KEEP_DIRS=1 compare_output sysbench "${a[@]}" --validate prepare
        KEEP_DIRS=1 compare_output sysbench "${a[@]}" --validate --file-test-mode=rndrw --threads=2 --time=1 run
        KEEP_DIRS=1 compare_output sysbench "${a[@]}" --file-test-mode=seqwr --time=1 run
        KEEP_DIRS=1 compare_output sysbench "${a[@]}" --validate --file-test-mode=seqrd --time=1 run
        KEEP_DIRS=1 compare_output sysbench "${a[@]}" cleanup
        # A larger set over a smaller one: both extend each file from its end.
        KEEP_DIRS=1 compare_output sysbench fileio --file-num=4 --file-total-size=8M prepare
        KEEP_DIRS=1 compare_output sysbench "${a[@]}" prepare
        # More, smaller files over that set: the four long enough reused, two more made.
        local six=(fileio --file-num=6 --file-total-size=12M)
        KEEP_DIRS=1 compare_output sysbench "${six[@]}" prepare
        KEEP_DIRS=1 compare_output sysbench "${six[@]}" --file-test-mode=rndrd --time=1 run
        KEEP_DIRS=1 compare_output sysbench "${six[@]}" cleanup
        ;;
    ffsb)
        # The profile of the headline runs, its fileset in each tool's directory.
        local kind
        for kind in original fslab; do
            rm -rf "${mnt:?}/$kind" && mkdir -p "$mnt/$kind"
            job_ffsb "$kind" "$mnt/$kind" "$work/out/text-$kind.log" 2
        done
        compare_texts ffsb "the headline runs' profile, 2 s"
        if [[ ${FFSB_GRAMMAR:-5} == 6 ]]; then
            for kind in original fslab; do
                rm -rf "${mnt:?}/$kind" && mkdir -p "$mnt/$kind"
                FFSB_STATS=1 job_ffsb "$kind" "$mnt/$kind" "$work/out/text-$kind.log" 2
            done
            compare_texts ffsb "the same with [stats], 2 s"
            for kind in original fslab; do
                rm -rf "${mnt:?}/$kind" && mkdir -p "$mnt/$kind"
                FFSB_CREATEDIR=1 job_ffsb "$kind" "$mnt/$kind" "$work/out/text-$kind.log" 2
            done
            compare_texts ffsb "the same with createdir, 2 s"
        fi
        ;;
    iozone)
        local line
        for line in "-i 0 -t 2 -s 64k -r 4k -x" "-i 0 -i 1 -i 2 -t 2 -s 64k -r 4k -x -R -C" \
            "-i 0 -t 2 -s 64k -r 4k -x -R -T" "-i 0 -t 1 -s 64k -r 4k -x -O" \
            "-i 0 -i 3 -i 5 -t 2 -s 64k -r 4k -x -C -O -j 3" \
            "-i 0 -i 6 -i 7 -i 9 -i 10 -t 3 -s 64k -r 4k -x -e -R" \
            "-i 0 -i 2 -i 8 -t 2 -s 64k -r 4k -x -+B -+K 1 -R" \
            "-a -n 64k -g 128k -q 8k -i 0 -i 1 -R" "-a -n 64k -g 256k -q 16k -z -i 0 -i 3 -i 5 -i 6 -R" \
            "-a -E -n 64k -g 64k -q 8k -i 0 -i 10" "-a -n 64k -g 64k -q 8k -i 0 -i 9" \
            "-i 0 -i 1 -s 64k -r 4k -R" "-i 0 -i 1 -t 2 -s 64k -r 4k -x -+n -R" \
            "-a -n 64k -g 128k -q 8k -i 0 -i 1 -i 3 -+n -R" \
            "-l 1 -u 3 -i 0 -i 1 -s 64k -r 4k -x -R -C" "-t 2 -t 1 -i 0 -i 2 -s 64k -r 4k -x -R -T" \
            "-i 0 -i 1 -t 2 -s 64k -r 4k -x -+u -R -C" "-a -n 64k -g 128k -q 8k -i 0 -i 1 -+u -R"; do
            # shellcheck disable=SC2086 # the options, split as words on purpose
            compare_output iozone $line
        done
        ;;
    esac
    echo
}

echo "fidelity: $("$FSLAB" --version) against ${TOOLS[*]}; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
hold_reporting
echo
if [[ $PART == syscalls || $PART == both || $PART == all ]]; then
    for tool in "${TOOLS[@]}"; do syscalls "$tool"; done
fi
if [[ $PART == output || $PART == all ]]; then
    for tool in "${TOOLS[@]}"; do outputs "$tool"; done
fi
if [[ $PART == headlines || $PART == both || $PART == all ]]; then
    for tool in "${TOOLS[@]}"; do
        for fs in $FILESYSTEMS; do
            if [[ $tool == dbench ]]; then
                for n in $CLIENTS; do headlines "$tool" "$fs" "$n"; done
            else
                headlines "$tool" "$fs"
            fi
        done
        if [[ $tool == iozone ]]; then iozone_auto; fi
    done
fi
exit 0
