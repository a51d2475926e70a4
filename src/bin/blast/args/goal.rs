//! `--goal NAME[:ATTR=VALUE,...]`: an RFC 9971 Search Goal for `--search
//! mlr`, each attribute optional (its default below).

use blastdrop::session::parse::{self, BadValue};

/// --search: the knee's method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchMethod {
    /// blast's own search (crates/knee).
    Knee,
    /// RFC 9971 (crates/mlr).
    Mlr,
}

/// The attributes a goal has unless its --goal says otherwise (RFC 9971's
/// example goals for real NICs: 30 s final trials, 60 s duration sums).
pub const DEFAULT_EXCEED_RATIO: f64 = 0.5;
pub const DEFAULT_FINAL_S: f64 = 30.0;
pub const DEFAULT_SUM_S: f64 = 60.0;
pub const DEFAULT_INITIAL_S: f64 = 1.0;
pub const DEFAULT_WIDTH: f64 = 0.005;

const FORM: &str = "NAME[:loss=PCT,exceed=RATIO,final=SECONDS,sum=SECONDS,initial=SECONDS,width=PCT], e.g. PDR:loss=0.5%,final=30s,sum=60s";

/// A goal with its defaults filled in (the loss ratio's default is 0; the
/// default NDR and PDR goals take --loss and --pdr-loss).
pub fn goal(s: &str) -> Result<mlr::Goal, BadValue> {
    let (name, attrs) = s.split_once(':').unwrap_or((s, ""));
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err(BadValue(format!("goal {s:?} needs a name of letters, digits, - and _ first: {FORM}")));
    }
    let mut g = mlr::Goal {
        name: name.to_string(),
        loss_ratio: 0.0,
        exceed_ratio: DEFAULT_EXCEED_RATIO,
        final_trial_duration: DEFAULT_FINAL_S,
        duration_sum: DEFAULT_SUM_S,
        initial_trial_duration: DEFAULT_INITIAL_S,
        width: DEFAULT_WIDTH,
    };
    let (mut sum_given, mut final_given) = (false, false);
    for a in attrs.split(',').map(str::trim).filter(|a| !a.is_empty()) {
        let Some((k, v)) = a.split_once('=') else {
            return Err(BadValue(format!("goal {name}: {a:?} is not ATTR=VALUE: {FORM}")));
        };
        let secs = |v: &str| parse::duration(v).map(|d| d.as_secs_f64());
        match k.trim() {
            "loss" => g.loss_ratio = parse::percent(v)? / 100.0,
            "exceed" => {
                g.exceed_ratio = v
                    .trim()
                    .parse::<f64>()
                    .map_err(|_| BadValue(format!("goal {name}: exceed={v} is not a ratio from 0 to under 1, e.g. 0.5")))?
            }
            "final" => (g.final_trial_duration, final_given) = (secs(v)?, true),
            "sum" => (g.duration_sum, sum_given) = (secs(v)?, true),
            "initial" => g.initial_trial_duration = secs(v)?,
            "width" => g.width = parse::percent(v)? / 100.0,
            other => return Err(BadValue(format!("goal {name}: no attribute {other:?}: {FORM}"))),
        }
    }
    // A shorter final trial alone keeps the default's proportion (two per sum).
    if final_given && !sum_given {
        g.duration_sum = g.final_trial_duration * DEFAULT_SUM_S / DEFAULT_FINAL_S;
    }
    if g.initial_trial_duration > g.final_trial_duration {
        g.initial_trial_duration = g.final_trial_duration;
    }
    g.check().map_err(|e| BadValue(e.0))?;
    Ok(g)
}

/// --goal's value as clap checks it (the record keeps the text as given).
pub fn goal_text(s: &str) -> Result<String, BadValue> {
    goal(s).map(|_| s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_goal_takes_its_attributes_and_the_rest_by_default() {
        let g = goal("PDR:loss=0.5%,final=2s,width=1%").unwrap();
        assert_eq!((g.loss_ratio, g.final_trial_duration, g.duration_sum, g.width, g.exceed_ratio), (0.005, 2.0, 4.0, 0.01, 0.5));
        let g = goal("NDR").unwrap();
        assert_eq!((g.final_trial_duration, g.duration_sum, g.initial_trial_duration), (30.0, 60.0, 1.0));
        for (bad, says) in [
            ("", "needs a name"),
            ("P DR", "needs a name"),
            ("X:loss", "is not ATTR=VALUE"),
            ("X:speed=1", "no attribute \"speed\""),
            ("X:exceed=1", "exceed ratio 1 must be"),
            ("X:final=10s,sum=5s", "duration sum 5 s is shorter"),
            ("X:loss=120", "above 100"),
        ] {
            let e = goal(bad).unwrap_err().0;
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
