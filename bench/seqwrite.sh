# bench/seqwrite.sh: sourced by bench/engine.sh (case 4). 1 MiB sequential writes of a fresh
# 2 GiB file on the tmpfs, one thread: fslab `--op write` against fio rw=write ioengine=psync.
#
# The method, for a spread that says something:
# - a fresh file for every run: the file (and its directory) is removed before each run, so both
#   tools allocate every page of the file while they write it (fslab would otherwise keep the file
#   of the run before as "reused");
# - the same fallocate policy: none. fslab does not fallocate; fio is given --fallocate=none (its
#   default, native, would allocate the 2 GiB on the tmpfs while laying the file out, outside its
#   timing, and then only copy into pages already there);
# - `sync` and a cache drop (echo 3 > /proc/sys/vm/drop_caches) before every run, so that every
#   run starts from the same page cache and free memory, then SW_SETTLE seconds of rest;
# - the order of the two tools alternates from round to round (fslab first in odd rounds), and
#   each round's own ratio is reported beside the ratio of the medians;
# - SW_ROUNDS rounds (5), and MiB per CPU-second (user + system) beside MiB/s: the copy's cost,
#   which a busy machine's run queue moves less than the wall-clock rate.
# Goal: fslab/fio >= 1.00 (MiB/s), and the method's spread under 10%.
#
# Environment: SW_ROUNDS (ROUNDS), SW_SIZE (2g), SW_SETTLE (1), SW_PIN (a CPU list for taskset, to
# run both tools on the same processors; empty: not pinned).

SW_ROUNDS=${SW_ROUNDS:-$ROUNDS}
SW_SIZE=${SW_SIZE:-2g}
SW_SETTLE=${SW_SETTLE:-1}
SW_PIN=${SW_PIN:-}

sw_fresh() {
    rm -rf "$WD/adhoc"
    sync
    echo 3 >/proc/sys/vm/drop_caches
    sleep "$SW_SETTLE"
}

# One run of one tool; sets VAL (MiB/s) and EFF (MiB per CPU-second). Args: fslab|fio
sw_run() {
    local o pin=()
    [[ -n $SW_PIN ]] && pin=(taskset -c "$SW_PIN")
    sw_fresh
    next
    o=$NEXT.$1.json
    if [[ $1 == fslab ]]; then
        run "$o" "${o%.json}.err" "${pin[@]}" "$FSLAB" run --op write --bs 1m --size "$SW_SIZE" --threads 1 \
            --dir "$WD" --json || fail_run fslab "$o" "${o%.json}.err"
        check_fslab "$o" done no
        local bytes
        bytes=$(jq "$o" 'r["totals"]["bytes_written"]')
        [[ $bytes == "$SW_BYTES" ]] || log "    ! fslab wrote $bytes bytes, not $SW_BYTES"
        VAL=$(jq "$o" 'r["totals"]["write_mib_per_sec"]')
    else
        mkdir -p "$WD/adhoc"
        run "$o.stdout" "${o%.json}.err" "${pin[@]}" "$FIO" --name=case --filename="$WD/adhoc/f0" --rw=write \
            --bs=1m --size="$SW_SIZE" --ioengine=psync --fallocate=none --output-format=json --output="$o" ||
            fail_run fio "$o" "${o%.json}.err"
        [[ $(jq "$o" 'j["error"]') == 0 ]] || fail_run fio "$o" "${o%.json}.err"
        local bytes
        bytes=$(jq "$o" 'j["write"]["io_bytes"]')
        [[ $bytes == "$SW_BYTES" ]] || log "    ! fio wrote $bytes bytes, not $SW_BYTES"
        VAL=$(jq "$o" 'j["write"]["bw_bytes"] / 1048576')
    fi
    EFF=$(calc 'a[0] / 1048576 / a[1]' "$SW_BYTES" "$CPU_S")
}

seqwrite_case() {
    local r f i fe ie fv="" iv="" fev="" iev=""
    SW_BYTES=$(python3 -c "import sys; s='$SW_SIZE'.lower(); m={'k':1<<10,'m':1<<20,'g':1<<30}; print(int(s[:-1]) * m[s[-1]] if s[-1] in m else int(s))")
    log ""
    log "case 4: 1 MiB sequential writes of a fresh $SW_SIZE file, 1 thread, fio fallocate=none;"
    log "  fresh file, sync and drop_caches, ${SW_SETTLE}s rest before every run; order alternates${SW_PIN:+; pinned to CPUs $SW_PIN}"
    for ((r = 1; r <= SW_ROUNDS; r++)); do
        if ((r % 2)); then
            sw_run fslab; f=$VAL fe=$EFF
            sw_run fio; i=$VAL ie=$EFF
        else
            sw_run fio; i=$VAL ie=$EFF
            sw_run fslab; f=$VAL fe=$EFF
        fi
        fv+=" $f" iv+=" $i" fev+=" $fe" iev+=" $ie"
        log "  round $r: fslab $(fmt_int "$f") MiB/s ($(fmt_int "$fe") per CPU-s)   fio $(fmt_int "$i") MiB/s ($(fmt_int "$ie") per CPU-s)   ($(calc '"%.3f" % (a[0]/a[1])' "$f" "$i"))"
    done
    rm -rf "$WD/adhoc"
    GOAL=1.00 compare 4 "1m seqwrite, fresh $SW_SIZE file, 1 thread" MiB/s "$fv" "$iv"
    log "     per CPU-second: fslab $(fmt_int "$(calc 'median(a)' $fev)") MiB ±$(spread $fev), fio $(fmt_int "$(calc 'median(a)' $iev)") MiB ±$(spread $iev), paired $(ratios "$fev" "$iev")"
    local worst
    worst=$(calc 'max(a)' "$(spread $fv | tr -d %)" "$(spread $iv | tr -d %)")
    log "     the method's spread: $(calc '"%.1f%%" % a[0]' "$worst") (goal < 10%: $(calc '"met" if a[0] < 10 else "not met"' "$worst"))"
}
