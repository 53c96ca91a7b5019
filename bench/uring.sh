# bench/uring.sh: sourced by bench/engine.sh (case 7). fslab's io_uring engine against fio's, 4 KiB
# random reads at iodepth 1, 8, 32 and 128 with 1, 2 and 4 threads, on a 1 GiB file cached on the
# tmpfs and, with O_DIRECT, on a 1 GiB file of an ext4 image on a loop device (the image itself on
# the tmpfs). fslab runs with its defaults, fio with its own. Goal: fslab/fio >= 1.10 everywhere.
#
# Beside each iodepth at 1 thread, the limit: the per-core peak of fio's t/io_uring (one thread,
# its best one-second IOPS, see tio_peak in bench/lib.sh) reading the same file with the same
# iodepth, run in every round after fslab and fio, and the share of it that fslab and fio reach,
# in IOPS and in requests per CPU-second.
# Before the matrix, a census with perf (when installed): of the requests each tool submits, how
# many the kernel punts to io-wq workers, and the io_uring_enter calls per request (a thread that
# spins before it sleeps, as fslab's threads do, makes more of them).
#
# With U_ENGINE=libaio the same matrix runs on Linux native AIO (fslab's `--engine libaio`, fio's
# `--ioengine=libaio`), without the census and the t/io_uring limit.
#
# fslab and fio take turns, fslab first in odd rounds and fio in even ones; with U_BEST above 1 each
# runs that many times a round and its best run counts (the host taking the processor away only
# ever slows a run; it triples the case's time at 3).
#
# Environment: U_ENGINE (io_uring), U_DEPTHS ("1 8 32 128"), U_THREADS ("1 2 4"), U_SECS (SECS), U_FS ("tmpfs direct"),
# U_BEST (1),
# FIO_URING_EXTRA (more fio options, e.g. --registerfiles=1 --fixedbufs=1 --force_async=1), and
# for the limit (without either, no limit column):
#   T_IO_URING  the path of a t/io_uring built from fio's source outside this repository, e.g.
#               `cd /tmp/scratch/fio && ./configure && make t/io_uring` (TIO, its older name, works)
#   FIO_SRC     or a fio source tree outside this repository: t/io_uring is built there when missing
# fio runs its jobs as threads (--thread), as fslab does: its job processes call setsid(), and with
# sched_autogroup_enabled each session is a scheduling group of its own, so on a busy machine four
# fio processes get four shares of the CPU where fslab's four threads get one.

U_ENGINE=${U_ENGINE:-io_uring}
case $U_ENGINE in io_uring | libaio) ;; *) echo "bench/uring.sh: U_ENGINE is io_uring or libaio" >&2 && exit 2 ;; esac
U_DEPTHS=${U_DEPTHS:-1 8 32 128}
U_THREADS=${U_THREADS:-1 2 4}
U_SECS=${U_SECS:-$SECS}
U_FS=${U_FS:-tmpfs direct}
U_BEST=${U_BEST:-1}
FIO_URING_EXTRA=${FIO_URING_EXTRA:-}

# The file of a case's filesystem: $RD/adhoc/f0 on the tmpfs, or the ext4 image's.
uring_dir() { if [[ $1 == direct ]]; then echo "$EXT4_MNT/rd"; else echo "$RD"; fi; }

# Lays out the ext4 image's 1 GiB file once (fslab, untimed).
uring_layout_direct() {
    mount_ext4 1400M
    mkdir -p "$EXT4_MNT/rd"
    next
    local o=$NEXT.layout.json
    run "$o" "${o%.json}.err" "$FSLAB" run --op randread --bs 4k --size 1g --threads 1 --time 1s \
        --dir "$EXT4_MNT/rd" --direct --json || fail_run "fslab (ext4 layout)" "$o" "${o%.json}.err"
    log "  laid out $EXT4_MNT/rd/adhoc/f0 (1 GiB on ext4 on $EXT4_DEV, image on the tmpfs)"
}

# One timed run of one tool on one case: its IOPS in VAL, its requests per CPU-second in EFF.
# Args: tool fs depth threads
uring_run() {
    local tool=$1 fs=$2 qd=$3 th=$4 dir o e
    dir=$(uring_dir "$fs")
    next
    o=$NEXT.$tool.json e=$NEXT.$tool.err
    if [[ $tool == fslab ]]; then
        local direct=()
        [[ $fs == direct ]] && direct=(--direct)
        run "$o" "$e" "$FSLAB" run --op randread --bs 4k --size 1g --threads "$th" --engine "$U_ENGINE" \
            --iodepth "$qd" --time "${U_SECS}s" --dir "$dir" --json "${direct[@]}" || fail_run fslab "$o" "$e"
        check_fslab "$o" time yes
        VAL=$(jq "$o" 'r["totals"]["ops_per_sec"]')
        EFF=$(calc 'a[0] / a[1]' "$(jq "$o" 'r["totals"]["ops"]')" "$CPU_S")
    else
        local direct=()
        [[ $fs == direct ]] && direct=(--direct=1)
        # shellcheck disable=SC2086
        run "$o.stdout" "$e" "$FIO" --name=case --filename="$dir/adhoc/f0" --rw=randread --bs=4k --size=1g \
            --ioengine="$U_ENGINE" --iodepth="$qd" --numjobs="$th" --thread --group_reporting --time_based \
            --runtime="$U_SECS" --output-format=json --output="$o" "${direct[@]}" $FIO_URING_EXTRA ||
            fail_run fio "$o" "$e"
        [[ $(jq "$o" 'j["error"]') == 0 ]] || fail_run fio "$o" "$e"
        VAL=$(jq "$o" 'j["read"]["iops"]')
        EFF=$(calc 'a[0] / a[1]' "$(jq "$o" 'j["read"]["total_ios"]')" "$CPU_S")
    fi
}

# One case: rounds of fslab and fio, alternating (fslab first in odd rounds, fio in even ones),
# each U_BEST times, the best of each tool's runs counting; then t/io_uring at one thread.
# Args: fs depth threads
uring_case() {
    local fs=$1 qd=$2 th=$3 r b t p fv="" iv="" pv="" pc="" fc="" ic="" order
    for ((r = 1; r <= ROUNDS; r++)); do
        order="fslab fio"
        ((r % 2 == 0)) && order="fio fslab"
        local -A best=() beff=() runs=()
        for ((b = 0; b < U_BEST; b++)); do
            for t in $order; do
                uring_run "$t" "$fs" "$qd" "$th"
                runs[$t]+=" $(fmt_int "$VAL")"
                if beats "$VAL" "${best[$t]:-}"; then
                    best[$t]=$VAL beff[$t]=$EFF
                fi
            done
        done
        fv+=" ${best[fslab]}" iv+=" ${best[fio]}" fc+=" ${beff[fslab]}" ic+=" ${beff[fio]}"
        p=""
        if [[ $th == 1 && $U_ENGINE == io_uring ]]; then
            tio_peak "$(uring_dir "$fs")/adhoc/f0" "$qd" "$U_SECS" "$([[ $fs == direct ]] && echo 1 || echo 0)"
            p=$TIO_PEAK
            [[ -n $p ]] && pv+=" $p" pc+=" $TIO_PER_CPU" p="  t/io_uring peak $(fmt_int "$p") (mean $(fmt_int "$TIO_MEAN"))"
        fi
        log "  $fs iodepth $qd threads $th round $r: fslab $(fmt_int "${best[fslab]}")  fio $(fmt_int "${best[fio]}")  ($(calc '"%.3f" % (a[0]/a[1])' "${best[fslab]}" "${best[fio]}"))$p$( ((U_BEST > 1)) && echo "   runs: fslab [${runs[fslab]# }] fio [${runs[fio]# }]")"
    done
    local fm im ratio verdict limit="" goal=1.10
    fm=$(calc 'median(a)' $fv)
    im=$(calc 'median(a)' $iv)
    ratio=$(calc '"%.3f" % (a[0] / a[1])' "$fm" "$im")
    local lo hi cover
    read -r verdict lo hi cover < <(settle "$fv" "$iv" "$goal")
    if [[ -n $pv ]]; then
        limit_of "$fm" "$im" "$pv" "$(calc 'median(a)' $fc)" "$(calc 'median(a)' $ic)" "$pc"
        limit=$LIMIT
        log "  => iodepth $qd, 1 thread: t/io_uring's per-core peak $LIMIT_LINE"
    fi
    URING_ROWS+=("$fs|$qd|$th|$(fmt_int "$fm") ±$(spread $fv)|$(fmt_int "$im") ±$(spread $iv)|$ratio|$(ratios "$fv" "$iv")|$(ratios "$fc" "$ic")|$limit|$verdict$([[ $cover != 0 ]] && echo " [$lo-$hi]")")
    URING_TOTAL=$((URING_TOTAL + 1))
    [[ $verdict == PASS ]] && URING_PASS=$((URING_PASS + 1))
    [[ $verdict == MISS ]] && URING_MISS=$((URING_MISS + 1))
}

# How the kernel treats each tool's requests (perf stat on tracepoints): the share punted to io-wq
# workers and the io_uring_enter calls per request. Args: fs depth
uring_census() {
    local fs=$1 qd=$2 dir direct_fslab=() direct_fio=() o
    [[ $U_ENGINE == io_uring ]] || return 0
    command -v perf >/dev/null || { log "  (no perf: no census of io-wq punts)"; return 0; }
    [[ $fs == direct ]] && direct_fslab=(--direct) direct_fio=(--direct=1)
    dir=$(uring_dir "$fs")
    local ev=io_uring:io_uring_submit_req,io_uring:io_uring_queue_async_work,syscalls:sys_enter_io_uring_enter
    census_line() { # label outfile
        python3 - "$1" "$2" <<'EOF'
import sys, re
c = {}
for l in open(sys.argv[2]):
    m = re.match(r"\s*([0-9,]+)\s+(\S+)", l)
    if m and ":" in m.group(2):
        c[m.group(2)] = float(m.group(1).replace(",", ""))
sub = c.get("io_uring:io_uring_submit_req", 0) or 1
print(f"    {sys.argv[1]:<28} {int(sub):>10,} requests, {100 * c.get('io_uring:io_uring_queue_async_work', 0) / sub:5.1f}% punted to io-wq, "
      f"{c.get('syscalls:sys_enter_io_uring_enter', 0) / sub:.3f} io_uring_enter per request")
EOF
    }
    log "  census, $fs, iodepth $qd, 1 thread, ${U_SECS}s each:"
    for variant in default async; do
        next
        o=$NEXT.census
        local extra=()
        [[ $variant == async ]] && extra=(--force-async true)
        perf stat -e "$ev" -o "$o" -- "$FSLAB" run --op randread --bs 4k --size 1g --threads 1 --engine io_uring \
            --iodepth "$qd" --time "${U_SECS}s" --dir "$dir" --json "${direct_fslab[@]}" "${extra[@]}" >/dev/null 2>&1
        census_line "fslab$([[ $variant == async ]] && echo ' --force-async true')" "$o"
    done
    next
    o=$NEXT.census
    perf stat -e "$ev" -o "$o" -- "$FIO" --name=case --filename="$dir/adhoc/f0" --rw=randread --bs=4k --size=1g \
        --ioengine=io_uring --iodepth="$qd" --time_based --runtime="$U_SECS" "${direct_fio[@]}" >/dev/null 2>&1
    census_line "fio" "$o"
}

uring_cases() {
    URING_ROWS=()
    URING_TOTAL=0 URING_PASS=0 URING_MISS=0
    log ""
    log "case 7: $U_ENGINE 4k randread, fslab vs fio, iodepth {$U_DEPTHS} x threads {$U_THREADS} x {$U_FS}, ${U_SECS}s runs$( ((U_BEST > 1)) && echo ", each tool's best of $U_BEST a round")"
    if [[ -n $TIO_BIN ]]; then
        log "  limit: $TIO_BIN, at 1 thread"
    else
        log "  (T_IO_URING and FIO_SRC unset: no t/io_uring limit; build it from fio's source outside the repository)"
    fi
    for fs in $U_FS; do
        [[ $fs == direct ]] && uring_layout_direct
        uring_census "$fs" 32
        for qd in $U_DEPTHS; do
            for th in $U_THREADS; do
                uring_case "$fs" "$qd" "$th"
            done
        done
    done
    log ""
    log "case 7 table: IOPS medians ± spread (max-min)/median; ratio of medians; paired ratios median [min-max];"
    log "  the same in requests per CPU-second (each tool's user + system time, io-wq workers included);"
    log "  limit: t/io_uring's per-core peak (one thread, its best second; median over the rounds) and the"
    log "  shares of it that fslab and fio reach (their medians over its median); the same in requests per"
    log "  CPU-second (on the tmpfs every read is punted to io-wq workers on other cores: the fairer one);"
    log "  verdict: PASS or MISS when a 90% interval of the paired ratios' median is all above or all below"
    log "  1.10, UNSETTLED when it straddles it (bench/settle.py)"
    {
        echo "fs|iodepth|threads|fslab IOPS|fio IOPS|fslab/fio|paired|per CPU-s|limit: t/io_uring (fslab, fio share)|>= 1.10"
        printf '%s\n' "${URING_ROWS[@]}"
    } | print_table
    local overall=UNSETTLED
    ((URING_PASS == URING_TOTAL)) && overall=PASS
    ((URING_MISS > 0)) && overall=MISS
    RESULTS+=("7|$U_ENGINE matrix, $URING_TOTAL cases|||$URING_PASS PASS, $URING_MISS MISS, $((URING_TOTAL - URING_PASS - URING_MISS)) UNSETTLED|>= 1.10 each|$overall")
}
