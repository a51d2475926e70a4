//! `--size imix` read as `--size-mix imix`, before clap sees the arguments.

/// `--size imix` (and `--size=imix`) before any `--` is `--size-mix imix`:
/// a mix is not a list of sizes, but it is asked for where sizes are.
pub fn size_mix_shorthand(argv: impl IntoIterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut out: Vec<std::ffi::OsString> = Vec::new();
    let mut eal = false;
    for a in argv {
        if !eal && a == "imix" && out.last().is_some_and(|p| p == "--size") {
            *out.last_mut().expect("checked") = "--size-mix".into();
        } else if !eal && a == "--size=imix" {
            out.extend(["--size-mix".into(), "imix".into()]);
            continue;
        }
        eal |= a == "--";
        out.push(a);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<std::ffi::OsString> {
        v.iter().map(|s| s.into()).collect()
    }

    #[test]
    fn size_imix_is_the_size_mix_before_the_eal_arguments_only() {
        assert_eq!(
            size_mix_shorthand(os(&["blast", "--size", "imix", "--count", "12"])),
            os(&["blast", "--size-mix", "imix", "--count", "12"])
        );
        assert_eq!(size_mix_shorthand(os(&["blast", "--size=imix"])), os(&["blast", "--size-mix", "imix"]));
        assert_eq!(
            size_mix_shorthand(os(&["blast", "--size", "64", "--", "--size", "imix"])),
            os(&["blast", "--size", "64", "--", "--size", "imix"])
        );
    }
}
