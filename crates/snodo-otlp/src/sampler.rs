//! The head sampler of `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG`.

use super::ExportError;

/// Which spans are exported.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Sampler {
    /// Every span.
    AlwaysOn,
    /// None.
    AlwaysOff,
    /// A root span when its trace id falls in the ratio.
    Ratio(f64),
    /// What the parent decided; a root by the inner sampler.
    ParentBased(Root),
}

/// How a parent-based sampler decides a root.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Root {
    /// Every root.
    AlwaysOn,
    /// No root.
    AlwaysOff,
    /// Roots in the ratio.
    Ratio(f64),
}

impl Sampler {
    /// The sampler the variables name; `parentbased_always_on` when unset.
    pub(crate) fn read(name: Option<&str>, arg: Option<&str>) -> Result<Self, ExportError> {
        let ratio = || -> Result<f64, ExportError> {
            match arg {
                None => Ok(1.0),
                Some(a) => match a.parse::<f64>() {
                    Ok(r) if (0.0..=1.0).contains(&r) => Ok(r),
                    _ => Err(ExportError::new(format!(
                        "OTEL_TRACES_SAMPLER_ARG={a} is not a ratio between 0 and 1"
                    ))),
                },
            }
        };
        Ok(match name {
            None | Some("parentbased_always_on") => Sampler::ParentBased(Root::AlwaysOn),
            Some("always_on") => Sampler::AlwaysOn,
            Some("always_off") => Sampler::AlwaysOff,
            Some("traceidratio") => Sampler::Ratio(ratio()?),
            Some("parentbased_always_off") => Sampler::ParentBased(Root::AlwaysOff),
            Some("parentbased_traceidratio") => Sampler::ParentBased(Root::Ratio(ratio()?)),
            Some(other) => {
                return Err(ExportError::new(format!(
                    "OTEL_TRACES_SAMPLER={other} is not supported (always_on, always_off, \
                     traceidratio, parentbased_always_on, parentbased_always_off, \
                     parentbased_traceidratio)"
                )));
            }
        })
    }

    /// Whether a span of `trace_id` is exported; `parent` is the parent's
    /// sampled flag (`None` for a root).
    pub(crate) fn sampled(&self, trace_id: &[u8; 16], parent: Option<bool>) -> bool {
        match (*self, parent) {
            (Sampler::AlwaysOn, _) => true,
            (Sampler::AlwaysOff, _) => false,
            (Sampler::Ratio(r), _) => in_ratio(trace_id, r),
            (Sampler::ParentBased(_), Some(p)) => p,
            (Sampler::ParentBased(Root::AlwaysOn), None) => true,
            (Sampler::ParentBased(Root::AlwaysOff), None) => false,
            (Sampler::ParentBased(Root::Ratio(r)), None) => in_ratio(trace_id, r),
        }
    }
}

/// The trace-id ratio rule: the id's last eight bytes, as a number below
/// 2^63, under `ratio` of that range.
fn in_ratio(trace_id: &[u8; 16], ratio: f64) -> bool {
    let mut low = [0u8; 8];
    low.copy_from_slice(&trace_id[8..]);
    let x = u64::from_be_bytes(low) >> 1;
    (x as f64) < ratio * (1u64 << 63) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ratios() {
        assert_eq!(
            Sampler::read(None, None).unwrap(),
            Sampler::ParentBased(Root::AlwaysOn)
        );
        assert_eq!(
            Sampler::read(Some("traceidratio"), Some("0.25")).unwrap(),
            Sampler::Ratio(0.25)
        );
        assert!(Sampler::read(Some("traceidratio"), Some("2")).is_err());
        assert!(Sampler::read(Some("jaeger_remote"), None).is_err());
    }

    #[test]
    fn a_ratio_keeps_about_its_share_and_parents_win() {
        let s = Sampler::Ratio(0.1);
        let mut kept = 0;
        let mut id = [0u8; 16];
        for i in 0u64..10_000 {
            id[8..].copy_from_slice(&i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes());
            kept += usize::from(s.sampled(&id, None));
        }
        assert!((800..1200).contains(&kept), "{kept}");
        let p = Sampler::ParentBased(Root::AlwaysOff);
        assert!(p.sampled(&id, Some(true)));
        assert!(!p.sampled(&id, None));
        assert!(!Sampler::ParentBased(Root::AlwaysOn).sampled(&id, Some(false)));
    }
}
