# bench/scaling.sh: sourced by bench/engine.sh (case 9). 4 KiB random reads of the cached 1 GiB
# file on the tmpfs against the number of threads (1, 2, 4, 8, 16), with psync and with io_uring
# at iodepth S_DEPTH, fslab and fio alternating in every round: a table of median IOPS, spreads and
# fslab/fio. No goal of its own; with KEEP set, the table is also written there as scaling.csv.
#
# Environment: S_THREADS ("1 2 4 8 16"), S_DEPTH (32), S_ROUNDS (ROUNDS), S_SECS (SECS).

S_THREADS=${S_THREADS:-1 2 4 8 16}
S_DEPTH=${S_DEPTH:-32}
S_ROUNDS=${S_ROUNDS:-$ROUNDS}
S_SECS=${S_SECS:-$SECS}

scaling_table() {
    local th eng qd r fv iv f i rows=() csv="threads,engine,fslab_iops,fio_iops,ratio"
    log ""
    log "case 9: scaling, 4k randread of the cached 1 GiB file, threads {$S_THREADS}, psync and io_uring iodepth $S_DEPTH, ${S_SECS}s runs, $S_ROUNDS rounds"
    for th in $S_THREADS; do
        local cells="$th"
        for eng in sync io_uring; do
            qd=1
            [[ $eng == io_uring ]] && qd=$S_DEPTH
            fv="" iv=""
            for ((r = 1; r <= S_ROUNDS; r++)); do
                local ieng=psync
                [[ $eng == io_uring ]] && ieng=io_uring
                # The tools take turns going first.
                if ((r % 2)); then
                    RUNSECS=$S_SECS fslab_rr "$th" "$eng" "$qd" && f=$VAL && RUNSECS=$S_SECS fio_rr "$th" "$ieng" "$qd" && i=$VAL
                else
                    RUNSECS=$S_SECS fio_rr "$th" "$ieng" "$qd" && i=$VAL && RUNSECS=$S_SECS fslab_rr "$th" "$eng" "$qd" && f=$VAL
                fi
                fv+=" $f" iv+=" $i"
            done
            local fm im
            fm=$(calc 'median(a)' $fv)
            im=$(calc 'median(a)' $iv)
            log "  $eng, $th thread(s): fslab $(fmt_int "$fm") ±$(spread $fv)  fio $(fmt_int "$im") ±$(spread $iv)  fslab/fio $(calc '"%.3f" % (a[0]/a[1])' "$fm" "$im") (paired $(ratios "$fv" "$iv"))"
            cells+="|$(fmt_int "$fm") ±$(spread $fv)|$(fmt_int "$im") ±$(spread $iv)|$(calc '"%.3f" % (a[0]/a[1])' "$fm" "$im")"
            csv+=$'\n'"$th,$eng,$fm,$im,$(calc '"%.4f" % (a[0]/a[1])' "$fm" "$im")"
        done
        rows+=("$cells")
    done
    log ""
    log "case 9 table: median IOPS ± spread over $S_ROUNDS rounds"
    {
        echo "threads|fslab psync|fio psync|fslab/fio|fslab io_uring qd$S_DEPTH|fio io_uring qd$S_DEPTH|fslab/fio"
        printf '%s\n' "${rows[@]}"
    } | print_table
    if [[ -n $KEEP ]]; then
        mkdir -p "$KEEP" && printf '%s\n' "$csv" >"$KEEP/scaling.csv"
    fi
}
