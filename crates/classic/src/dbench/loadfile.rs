//! dbench 4.0 loadfiles: one operation a line, as Samba's NetBench traces recorded them.
//!
//! A line is `[timestamp] Op ["path"] params… STATUS`. Before it is split, every `\` becomes `/`;
//! tokens are separated by blanks, and a quoted token keeps its blanks. Lines starting with `#`
//! and lines of fewer than two tokens are skipped. A leading number is the time (seconds since
//! the start of the pass) the line is due at. The last token is the status the call is expected
//! to end with: `NT_STATUS_OK` (or `0x0`) for success, any other `NT_STATUS_…` or `0x…` for a
//! failure.
//!
//! This module only reads lines into [`Line`]s; where their paths lead is decided when the
//! loadfile is compiled (see the parent module).

use super::Error;

/// One operation of a loadfile.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// 1-based line number in the file.
    pub number: usize,
    /// When the line is due, in seconds since the start of the pass (timestamped loadfiles).
    pub at: Option<f64>,
    pub op: Op,
    pub status: Status,
}

/// The outcome a line expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// `NT_STATUS_OK` or a `0x` status whose value is 0.
    Ok,
    /// Any other status, as written.
    Fail(String),
}

/// A loadfile operation with its parameters. Paths are as written, with `/` for `\`.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// `NTCreateX path create_options create_disposition handle`.
    NtCreateX {
        path: String,
        options: u32,
        disposition: u32,
        handle: u32,
    },
    Close {
        handle: u32,
    },
    Rename {
        from: String,
        to: String,
    },
    /// `Unlink path attributes`.
    Unlink {
        path: String,
    },
    Rmdir {
        path: String,
    },
    Deltree {
        path: String,
    },
    Mkdir {
        path: String,
    },
    /// `QUERY_PATH_INFORMATION path level`.
    QueryPath {
        path: String,
    },
    /// `QUERY_FILE_INFORMATION handle level`.
    QueryFile {
        handle: u32,
    },
    /// `QUERY_FS_INFORMATION level`.
    QueryFs,
    /// `SET_FILE_INFORMATION handle level`.
    SetFile {
        handle: u32,
    },
    /// `FIND_FIRST pattern level maxcnt count`.
    FindFirst {
        pattern: String,
        max: u32,
    },
    /// `WriteX handle offset size returned`.
    WriteX {
        handle: u32,
        offset: u64,
        size: u32,
    },
    /// `ReadX handle offset size returned`.
    ReadX {
        handle: u32,
        offset: u64,
        size: u32,
    },
    /// `LockX handle offset size`.
    LockX {
        handle: u32,
        offset: u64,
        size: u64,
    },
    /// `UnlockX handle offset size`.
    UnlockX {
        handle: u32,
        offset: u64,
        size: u64,
    },
    Flush {
        handle: u32,
    },
    /// `Sleep usec`: the client pauses (`usleep()`).
    Sleep {
        usec: u64,
    },
}

/// The operations a dbench 4.0 loadfile may name, with what each takes (for error messages).
const GRAMMAR: &[(&str, &str)] = &[
    ("NTCreateX", "path create_options create_disposition handle"),
    ("Close", "handle"),
    ("Rename", "old_path new_path"),
    ("Unlink", "path attributes"),
    ("Rmdir", "path"),
    ("Deltree", "path"),
    ("Mkdir", "path"),
    ("QUERY_PATH_INFORMATION", "path level"),
    ("QUERY_FILE_INFORMATION", "handle level"),
    ("QUERY_FS_INFORMATION", "level"),
    ("SET_FILE_INFORMATION", "handle level"),
    ("FIND_FIRST", "pattern level max_count count"),
    ("WriteX", "handle offset size returned_size"),
    ("ReadX", "handle offset size returned_size"),
    ("LockX", "handle offset size"),
    ("UnlockX", "handle offset size"),
    ("Flush", "handle"),
    ("Sleep", "microseconds"),
];

/// Reads a whole loadfile; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Vec<Line>, Error> {
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        if let Some(line) = parse_line(raw, i + 1, file)? {
            lines.push(line);
        }
    }
    if lines.is_empty() {
        return Err(Error::Loadfile {
            file: file.to_string(),
            line: 0,
            message: "the loadfile has no operations".into(),
        });
    }
    Ok(lines)
}

/// Reads one line: `None` for a comment or a line of fewer than two tokens.
pub fn parse_line(raw: &str, number: usize, file: &str) -> Result<Option<Line>, Error> {
    let bad = |message: String| Error::Loadfile {
        file: file.to_string(),
        line: number,
        message: crate::text::shorten(&message),
    };
    let text = raw.replace('\\', "/");
    if text.trim_start().starts_with('#') {
        return Ok(None);
    }
    let mut tokens = tokenize(&text).map_err(bad)?;
    if tokens.len() < 2 {
        return Ok(None);
    }
    let at = match timestamp(&tokens[0]) {
        Some(Ok(t)) => {
            tokens.remove(0);
            Some(t)
        }
        Some(Err(m)) => return Err(bad(m)),
        None => None,
    };
    let name = tokens[0].clone();
    let Some(&(_, grammar)) = GRAMMAR.iter().find(|(n, _)| *n == name) else {
        return Err(bad(format!(
            "unknown operation `{name}` (a dbench 4.0 loadfile has {})",
            GRAMMAR.iter().map(|g| g.0).collect::<Vec<_>>().join(", ")
        )));
    };
    let want = grammar.split(' ').count();
    // The operation, its parameters, then the status.
    if tokens.len() < want + 2 {
        return Err(bad(format!(
            "{name} takes {grammar} and a status; this line has {} of them",
            tokens.len() - 1
        )));
    }
    let status_token = tokens.last().expect("at least two tokens");
    let status = status(status_token).map_err(bad)?;
    let p = &tokens[1..];
    let field = |k: usize| grammar.split(' ').nth(k).unwrap_or("parameter");
    let num =
        |k: usize| number_u64(&p[k]).ok_or_else(|| bad(format!("{name}: {} `{}` is not a number", field(k), p[k])));
    let num32 = |k: usize| {
        let v = num(k)?;
        u32::try_from(v).map_err(|_| bad(format!("{name}: {} {v} is too large", field(k))))
    };
    // Offsets and lock lengths are a file's signed 64-bit off_t.
    let off = |k: usize| {
        let v = num(k)?;
        if v > i64::MAX as u64 {
            return Err(bad(format!(
                "{name}: {} {v} is too large (at most {})",
                field(k),
                i64::MAX
            )));
        }
        Ok(v)
    };
    let path = |k: usize| -> Result<String, Error> {
        if p[k].is_empty() {
            return Err(bad(format!("{name}: the {} is empty", field(k))));
        }
        Ok(p[k].clone())
    };
    let op = match name.as_str() {
        "NTCreateX" => Op::NtCreateX {
            path: path(0)?,
            options: num32(1)?,
            disposition: num32(2)?,
            handle: num32(3)?,
        },
        "Close" => Op::Close { handle: num32(0)? },
        "Rename" => Op::Rename {
            from: path(0)?,
            to: path(1)?,
        },
        "Unlink" => Op::Unlink { path: path(0)? },
        "Rmdir" => Op::Rmdir { path: path(0)? },
        "Deltree" => Op::Deltree { path: path(0)? },
        "Mkdir" => Op::Mkdir { path: path(0)? },
        "QUERY_PATH_INFORMATION" => Op::QueryPath { path: path(0)? },
        "QUERY_FILE_INFORMATION" => Op::QueryFile { handle: num32(0)? },
        "QUERY_FS_INFORMATION" => Op::QueryFs,
        "SET_FILE_INFORMATION" => Op::SetFile { handle: num32(0)? },
        "FIND_FIRST" => Op::FindFirst {
            pattern: path(0)?,
            max: num32(2)?,
        },
        "WriteX" => Op::WriteX {
            handle: num32(0)?,
            offset: off(1)?,
            size: num32(2)?,
        },
        "ReadX" => Op::ReadX {
            handle: num32(0)?,
            offset: off(1)?,
            size: num32(2)?,
        },
        "LockX" => Op::LockX {
            handle: num32(0)?,
            offset: off(1)?,
            size: off(2)?,
        },
        "UnlockX" => Op::UnlockX {
            handle: num32(0)?,
            offset: off(1)?,
            size: off(2)?,
        },
        "Flush" => Op::Flush { handle: num32(0)? },
        "Sleep" => Op::Sleep { usec: num(0)? },
        _ => unreachable!("every name of GRAMMAR is handled"),
    };
    Ok(Some(Line { number, at, op, status }))
}

/// Splits a line on blanks; a token in double quotes keeps its blanks (and loses its quotes).
fn tokenize(line: &str) -> Result<Vec<String>, String> {
    let mut tokens = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let Some(&c) = chars.peek() else { break };
        let mut token = String::new();
        if c == '"' {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') => break,
                    Some(c) => token.push(c),
                    None => return Err(format!("a quoted token has no closing quote: \"{token}")),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                token.push(c);
            }
        }
        tokens.push(token);
    }
    Ok(tokens)
}

/// A leading timestamp: `None` when the token is no number (then it is the operation).
fn timestamp(token: &str) -> Option<Result<f64, String>> {
    let first = token.chars().next()?;
    if !(first.is_ascii_digit() || first == '.') {
        return None;
    }
    Some(match token.parse::<f64>() {
        Ok(t) if t.is_finite() && t >= 0.0 => Ok(t),
        _ => Err(format!(
            "`{token}` is not a valid timestamp (seconds since the start of the pass)"
        )),
    })
}

fn status(token: &str) -> Result<Status, String> {
    if token == "NT_STATUS_OK" {
        return Ok(Status::Ok);
    }
    if token.starts_with("NT_STATUS_") {
        return Ok(Status::Fail(token.to_string()));
    }
    if let Some(hex) = token.strip_prefix("0x").or_else(|| token.strip_prefix("0X")) {
        return match u64::from_str_radix(hex, 16) {
            Ok(0) => Ok(Status::Ok),
            Ok(_) => Ok(Status::Fail(token.to_string())),
            Err(_) => Err(format!("the status `{token}` is not a hexadecimal number")),
        };
    }
    Err(format!(
        "the status `{token}` must start with NT_STATUS_ or 0x (it is the last token of a line)"
    ))
}

/// A number as dbench reads it: decimal, or hexadecimal after `0x`.
fn number_u64(token: &str) -> Option<u64> {
    match token.strip_prefix("0x").or_else(|| token.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => token.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str) -> Line {
        parse_line(line, 7, "t.txt").unwrap().expect("a line")
    }

    fn err(line: &str) -> String {
        parse_line(line, 7, "t.txt").unwrap_err().to_string()
    }

    #[test]
    fn reads_a_create_with_backslashes_and_quotes() {
        let l = one(r#"NTCreateX "\clients\client1\a b.txt" 0x40 0x2 9938 NT_STATUS_OK"#);
        assert_eq!(l.number, 7);
        assert_eq!(l.at, None);
        assert_eq!(l.status, Status::Ok);
        assert_eq!(
            l.op,
            Op::NtCreateX {
                path: "/clients/client1/a b.txt".into(),
                options: 0x40,
                disposition: 2,
                handle: 9938
            }
        );
    }

    #[test]
    fn reads_a_leading_timestamp_and_a_failure_status() {
        let l = one(r#"1.250 QUERY_PATH_INFORMATION "\clients\client1\x" 1004 NT_STATUS_OBJECT_NAME_NOT_FOUND"#);
        assert_eq!(l.at, Some(1.25));
        assert_eq!(l.status, Status::Fail("NT_STATUS_OBJECT_NAME_NOT_FOUND".into()));
        assert_eq!(
            l.op,
            Op::QueryPath {
                path: "/clients/client1/x".into()
            }
        );
    }

    #[test]
    fn reads_a_lock_s_range() {
        assert_eq!(
            one("LockX 10430 2147483538 1 NT_STATUS_OK").op,
            Op::LockX {
                handle: 10430,
                offset: 2_147_483_538,
                size: 1
            }
        );
        assert_eq!(
            one("UnlockX 3 0x10 20 NT_STATUS_OK").op,
            Op::UnlockX {
                handle: 3,
                offset: 16,
                size: 20
            }
        );
        assert!(err("LockX 3 0 NT_STATUS_OK").contains("LockX takes handle offset size"));
    }

    #[test]
    fn offsets_beyond_an_off_t_are_refused() {
        let e = err("WriteX 9938 9223372036854775808 1 1 NT_STATUS_OK");
        assert_eq!(
            e,
            "t.txt:7: WriteX: offset 9223372036854775808 is too large (at most 9223372036854775807)"
        );
        let e = err("LockX 9938 0 0xffffffffffffffff NT_STATUS_OK");
        assert!(
            e.starts_with("t.txt:7: LockX: size 18446744073709551615 is too large"),
            "{e}"
        );
        assert!(matches!(
            one("ReadX 1 9223372036854775807 1 1 NT_STATUS_OK").op,
            Op::ReadX {
                offset: 9223372036854775807,
                ..
            }
        ));
    }

    #[test]
    fn a_megabyte_token_is_echoed_as_an_excerpt() {
        let e = err(&format!("{} x NT_STATUS_OK", "Q".repeat(1 << 20)));
        assert!(e.starts_with("t.txt:7: unknown operation `QQQQ"), "{e}");
        assert!(e.contains("(1048578 bytes)"), "{e}");
        assert!(e.len() < 600, "{} bytes", e.len());
    }

    #[test]
    fn hex_statuses_are_zero_for_success() {
        assert_eq!(one("Close 5 0x00000000").status, Status::Ok);
        assert_eq!(one("Close 5 0xC0000034").status, Status::Fail("0xC0000034".into()));
    }

    #[test]
    fn skips_comments_and_short_lines() {
        assert_eq!(parse_line("# NTCreateX", 1, "t").unwrap(), None);
        assert_eq!(parse_line("Close", 1, "t").unwrap(), None);
        assert_eq!(parse_line("   ", 1, "t").unwrap(), None);
    }

    #[test]
    fn refuses_a_bad_status_naming_the_line() {
        let e = err("Close 5 SUCCESS");
        assert!(e.contains("t.txt:7") && e.contains("NT_STATUS_ or 0x"), "{e}");
    }

    #[test]
    fn refuses_missing_parameters_and_unknown_operations() {
        let e = err("WriteX 5 0 NT_STATUS_OK");
        assert!(
            e.contains("t.txt:7") && e.contains("WriteX takes handle offset size"),
            "{e}"
        );
        let e = err("SLEEP 10 NT_STATUS_OK");
        assert!(e.contains("unknown operation `SLEEP`"), "{e}");
        let e = err("Sleep ten NT_STATUS_OK");
        assert!(
            e.contains("t.txt:7") && e.contains("Sleep: microseconds `ten` is not a number"),
            "{e}"
        );
        let e = err("Sleep NT_STATUS_OK");
        assert!(e.contains("Sleep takes microseconds and a status"), "{e}");
        let e = err("ReadX 5 zero 10 10 NT_STATUS_OK");
        assert!(e.contains("offset `zero` is not a number"), "{e}");
        let e = err(r#"Unlink "\clients\client1\x NT_STATUS_OK"#);
        assert!(e.contains("no closing quote"), "{e}");
    }

    #[test]
    fn a_whole_file_keeps_line_numbers() {
        let text = "# header\nMkdir \"\\clients\" NT_STATUS_OK\n\nClose 1 NT_STATUS_OK\n";
        let lines = parse(text, "t").unwrap();
        assert_eq!(lines.iter().map(|l| l.number).collect::<Vec<_>>(), vec![2, 4]);
        assert!(parse("# nothing\n", "t")
            .unwrap_err()
            .to_string()
            .contains("no operations"));
    }
}
