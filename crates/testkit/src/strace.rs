//! Reading `strace -f` logs.

/// Each call of an `strace -f -o FILE` log, whole, with the thread that made it: `(tid, call)`,
/// where `call` is `name(args) = result`. strace splits a call that another thread's call
/// interrupts into `name(args <unfinished ...>` and `<... name resumed>rest`; they are joined
/// again, in the place of the second part: the call's result is known from then on (a descriptor
/// an open returns, which another thread may have closed just before). Signals and exits (`---`,
/// `+++`) are left out.
pub fn whole_calls(text: &str) -> Vec<(String, String)> {
    let mut whole: Vec<(String, String)> = Vec::new();
    // For each thread, the first part of its call waiting to be resumed.
    let mut pending = std::collections::HashMap::<&str, &str>::new();
    for line in text.lines() {
        let Some((tid, call)) = line.split_once(char::is_whitespace) else {
            continue;
        };
        let call = call.trim_start();
        if call.starts_with("---") || call.starts_with("+++") {
            continue;
        }
        if let Some(head) = call.strip_suffix("<unfinished ...>") {
            pending.insert(tid, head.trim_end());
        } else if call.starts_with("<...") {
            let rest = call.split_once("resumed>").map_or("", |r| r.1);
            let head = pending.remove(tid).unwrap_or_default();
            whole.push((tid.to_string(), format!("{head}{rest}")));
        } else {
            whole.push((tid.to_string(), call.to_string()));
        }
    }
    whole
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_split_by_another_thread_s_is_joined_where_it_ends() {
        let log = "10 openat(AT_FDCWD, \"a\", O_RDWR|O_CREAT, 0600 <unfinished ...>\n\
                   11 close(3) = 0\n\
                   10 <... openat resumed>) = 4\n\
                   11 +++ exited with 0 +++\n";
        assert_eq!(
            whole_calls(log),
            [
                ("11".to_string(), "close(3) = 0".to_string()),
                (
                    "10".to_string(),
                    "openat(AT_FDCWD, \"a\", O_RDWR|O_CREAT, 0600) = 4".to_string()
                ),
            ]
        );
    }
}
