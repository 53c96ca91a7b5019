//! The checks a profile must pass as a whole once its text is read: 5.x's declared section
//! counts match the sections, there is a filesystem and a threadgroup, and every `bindfs` names a
//! filesystem (which it is then bound to). Checks of single values, and of what a `clone` names,
//! are made while reading (parse.rs).

use super::profile::{BindFs, Profile, TgSpec};
use super::ProfileError;

/// 5.x's `num_filesystems` and `num_threadgroups` (each with its line, when given) must be
/// given and match the sections the profile has.
pub(super) fn declared_counts(
    profile: &Profile,
    num_filesystems: Option<(u64, usize)>,
    num_threadgroups: Option<(u64, usize)>,
) -> Result<(), ProfileError> {
    for (name, declared, have, what) in [
        (
            "num_filesystems",
            num_filesystems,
            profile.filesystems.len(),
            "[filesystemN]",
        ),
        (
            "num_threadgroups",
            num_threadgroups,
            profile.threadgroups.len(),
            "[threadgroupN]",
        ),
    ] {
        match declared {
            Some((n, line)) if n != have as u64 => {
                return Err(ProfileError::at(
                    &profile.file,
                    line,
                    format!("{name}={n} but the profile has {have} {what} section(s)"),
                ));
            }
            Some(_) => {}
            None => {
                return Err(ProfileError::whole(
                    &profile.file,
                    format!("the 5.x grammar needs {name}=<count> before the sections"),
                ))
            }
        }
    }
    Ok(())
}

/// A profile runs at least one threadgroup on at least one filesystem.
pub(super) fn sections_present(profile: &Profile) -> Result<(), ProfileError> {
    if profile.filesystems.is_empty() {
        return Err(ProfileError::whole(
            &profile.file,
            "the profile has no [filesystem] section".into(),
        ));
    }
    if profile.threadgroups.is_empty() {
        return Err(ProfileError::whole(
            &profile.file,
            "the profile has no [threadgroup] section".into(),
        ));
    }
    Ok(())
}

/// Turns each `bindfs` into the index of the filesystem it names.
pub(super) fn resolve_bindfs(profile: &mut Profile) -> Result<(), ProfileError> {
    let locations: Vec<Option<String>> = profile.filesystems.iter().map(|f| f.location.clone()).collect();
    let file = profile.file.clone();
    let mut groups: Vec<&mut TgSpec> = profile.threadgroups.iter_mut().collect();
    for fs in profile.filesystems.iter_mut() {
        if let Some(ager) = fs.aging.as_mut() {
            groups.push(ager);
        }
    }
    for tg in groups {
        let Some(bind) = &tg.bindfs else { continue };
        let line = tg.lines.of("bindfs").unwrap_or(tg.line);
        tg.bound_to = Some(match bind {
            BindFs::Index(n) => {
                if *n >= locations.len() as u64 {
                    return Err(ProfileError::at(
                        &file,
                        line,
                        format!(
                            "bindfs={n} but the filesystems are numbered 0 to {}",
                            locations.len() - 1
                        ),
                    ));
                }
                *n as usize
            }
            BindFs::Location(loc) => locations
                .iter()
                .position(|l| l.as_deref() == Some(loc.as_str()))
                .ok_or_else(|| {
                    let known: Vec<&str> = locations.iter().flatten().map(String::as_str).collect();
                    ProfileError::at(
                        &file,
                        line,
                        format!(
                            "bindfs=`{loc}` names no filesystem (their locations: {})",
                            known.join(", ")
                        ),
                    )
                })?,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse;

    fn parse_err(text: &str) -> String {
        parse(text, "p.ffsb").expect_err("a bad profile").to_string()
    }

    #[test]
    fn five_x_counts_must_match_the_sections() {
        let e = parse_err(
            "num_filesystems=2\nnum_threadgroups=1\ntime=1\n[filesystem0]\nlocation=/a\n[end0]\n[threadgroup0]\nnum_threads=1\ncreate_weight=1\n[end0]\n",
        );
        assert!(
            e.starts_with("p.ffsb:1: num_filesystems=2 but the profile has 1"),
            "{e}"
        );
    }
}
