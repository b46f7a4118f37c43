//! Numbers compared by value, whatever their JSON representation.

use std::cmp::Ordering;

use serde_json::Number;

/// 2^127 as a float: integral floats strictly inside ±2^127 convert to `i128`
/// exactly.
pub(super) const I128_LIMIT: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;

/// 2^64 as a float: integral floats in `0.0..2^64` convert to `u64` exactly.
pub(super) const U64_LIMIT: f64 = 18_446_744_073_709_551_616.0;

/// A JSON number normalised so that numerically equal numbers are equal:
/// every integral value that fits an `i128` is `Int`, whatever its JSON form.
#[derive(Clone, Copy, Debug)]
pub(super) enum Num {
    Int(i128),
    /// Non-integral, or too large for `i128`; never NaN (JSON has none).
    Float(f64),
}

impl Num {
    pub(super) fn of(n: &Number) -> Num {
        if let Some(u) = n.as_u64() {
            Num::Int(i128::from(u))
        } else if let Some(i) = n.as_i64() {
            Num::Int(i128::from(i))
        } else {
            let f = n.as_f64().unwrap_or(0.0);
            if f.is_finite() && f.fract() == 0.0 && (-I128_LIMIT..I128_LIMIT).contains(&f) {
                // Exact: `f` is integral and inside the i128 range.
                #[allow(clippy::cast_possible_truncation)]
                Num::Int(f as i128)
            } else {
                Num::Float(f)
            }
        }
    }

    pub(super) fn cmp_to(self, other: Num) -> Ordering {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a.cmp(&b),
            (Num::Float(a), Num::Float(b)) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
            (Num::Int(a), Num::Float(b)) => int_cmp_float(a, b),
            (Num::Float(a), Num::Int(b)) => int_cmp_float(b, a).reverse(),
        }
    }
}

/// Compares an integer with a float that is non-integral or outside the
/// `i128` range (so the two are never equal).
pub(super) fn int_cmp_float(i: i128, f: f64) -> Ordering {
    if f >= I128_LIMIT {
        Ordering::Less
    } else if f < -I128_LIMIT {
        Ordering::Greater
    } else {
        // `f` is non-integral and in range: `i <= floor(f)` means `i < f`.
        #[allow(clippy::cast_possible_truncation)]
        let floor = f.floor() as i128;
        if i <= floor {
            Ordering::Less
        } else {
            Ordering::Greater
        }
    }
}

pub(super) fn num_eq(a: &Number, b: &Number) -> bool {
    Num::of(a).cmp_to(Num::of(b)) == Ordering::Equal
}
