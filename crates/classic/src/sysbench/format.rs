//! Numbers as sysbench prints them: sizes with binary units (`16KiB`, `33.333MiB`) and C's `%g`.

/// A byte count as sysbench prints sizes in its options block: divided by 1024 while it is at
/// least 1024 (up to GiB), with five significant digits (`%.5g`): `16KiB`, `33.333MiB`, `2GiB`.
pub fn size(bytes: f64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes;
    let mut unit = 0;
    while unit < UNITS.len() - 1 && value >= 1024.0 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{}{}", g(value, 5), UNITS[unit])
}

/// C's `%.<precision>g`: `precision` significant digits, trailing zeros dropped, scientific
/// notation when the exponent is below -4 or at least `precision`.
pub fn g(value: f64, precision: usize) -> String {
    if value == 0.0 || !value.is_finite() {
        return if value.is_finite() {
            "0".into()
        } else {
            value.to_string()
        };
    }
    let precision = precision.max(1);
    // The exponent after rounding to `precision` digits (9.99995 rounds up to 10.000).
    let sci = format!("{:.*e}", precision - 1, value);
    let (mantissa, exp) = sci.split_once('e').expect("`e` in scientific notation");
    let exp: i32 = exp.parse().expect("an integer exponent");
    if exp < -4 || exp >= precision as i32 {
        let mantissa = strip_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    let decimals = (precision as i32 - 1 - exp).max(0) as usize;
    strip_zeros(&format!("{value:.decimals$}")).to_string()
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_print_as_sysbench_prints_them() {
        // Each pair was printed by sysbench 1.0.20 itself.
        assert_eq!(size(16384.0), "16KiB");
        assert_eq!(size(4.0 * 1048576.0), "4MiB");
        assert_eq!(size((104857600u64 / 3) as f64), "33.333MiB");
        assert_eq!(size((1000000u64 / 3) as f64), "325.52KiB");
        assert_eq!(size(999999.0), "976.56KiB");
        assert_eq!(size(1024.0), "1KiB");
        assert_eq!(size(3.0), "3B");
        assert_eq!(size(2147483648.0), "2GiB");
        assert_eq!(size(1099511627776.0), "1024GiB");
        assert_eq!(size(12638248960.0), "11.77GiB");
    }

    #[test]
    fn g_follows_c() {
        assert_eq!(g(1.5, 5), "1.5");
        assert_eq!(g(100.0, 5), "100");
        assert_eq!(g(99999.5, 5), "1e+05");
        assert_eq!(g(123456.0, 5), "1.2346e+05");
        assert_eq!(g(0.0001, 5), "0.0001");
        assert_eq!(g(0.00001, 5), "1e-05");
        assert_eq!(g(0.0, 5), "0");
    }
}
