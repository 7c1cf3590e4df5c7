//! `--max-errors N|P%`: how many failed operations a run accepts before it
//! stops early. By default a run keeps going to its end whatever fails
//! (failures are outcomes); a budget is for the user who wants a run that
//! has gone wrong to stop.

use crate::error::{Error, Result};

/// Operations a run must have tried before a share of failures is judged,
/// so the first failure of a run is not 100% of it.
pub const MIN_TRIED_FOR_SHARE: u64 = 100;

/// How many failed operations a run accepts (recorded as the user wrote
/// it: "100", "5%").
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum ErrorBudget {
    /// Stop once this many operations have failed.
    Count(u64),
    /// Stop once more than this share (0..1) of the operations tried have
    /// failed, judged from [`MIN_TRIED_FOR_SHARE`] operations on.
    Share(f64),
}

impl ErrorBudget {
    /// Reads `N` (a count, 1 or more) or `P%` (a share, above 0 and below 100).
    pub fn parse(text: &str) -> Result<ErrorBudget> {
        let fix = "give a count of failed operations (--max-errors 100) or a share of those tried (--max-errors 5%)";
        if let Some(p) = text.trim().strip_suffix('%') {
            return match p.trim().parse::<f64>() {
                Ok(v) if v > 0.0 && v < 100.0 => Ok(ErrorBudget::Share(v / 100.0)),
                _ => Err(Error::usage(format!(
                    "--max-errors {text}: a share is above 0% and below 100%; {fix}"
                ))),
            };
        }
        let digits = text.trim().replace(['_', ','], "");
        match crate::units::parse_number(text) {
            Ok(n) if n >= 1 => Ok(ErrorBudget::Count(n)),
            Err(_) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
                Err(Error::usage(format!(
                    "--max-errors {text}: larger than any run's count of operations; leave --max-errors out to go on whatever fails"
                )))
            }
            _ => Err(Error::usage(format!(
                "--max-errors {text}: not a count of 1 or more nor a share; {fix}"
            ))),
        }
    }

    /// Whether `failed` failures of `tried` operations spend the budget.
    pub fn spent(&self, failed: u64, tried: u64) -> bool {
        match *self {
            ErrorBudget::Count(n) => failed >= n,
            ErrorBudget::Share(share) => {
                tried >= MIN_TRIED_FOR_SHARE && failed as f64 > share * tried as f64
            }
        }
    }

    /// Why a run stops when `failed` failures of `tried` `what` (operations,
    /// requests) spend the budget: "--max-errors 5: 5 of 14 operations had
    /// failed"; None while they do not.
    pub fn reason(&self, failed: u64, tried: u64, what: &str) -> Option<String> {
        self.spent(failed, tried).then(|| {
            format!(
                "--max-errors {}: {failed} of {tried} {what} had failed",
                self.describe()
            )
        })
    }

    /// As the user wrote it ("100", "5%").
    pub fn describe(&self) -> String {
        match *self {
            ErrorBudget::Count(n) => n.to_string(),
            ErrorBudget::Share(s) => format!("{}%", s * 100.0),
        }
    }
}

impl TryFrom<String> for ErrorBudget {
    type Error = Error;
    fn try_from(text: String) -> Result<Self> {
        ErrorBudget::parse(&text)
    }
}

impl From<ErrorBudget> for String {
    fn from(b: ErrorBudget) -> String {
        b.describe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_shares_parse_and_bad_ones_name_the_fix() {
        assert_eq!(ErrorBudget::parse("100").unwrap(), ErrorBudget::Count(100));
        assert_eq!(ErrorBudget::parse("1k").unwrap(), ErrorBudget::Count(1000));
        assert_eq!(ErrorBudget::parse("5%").unwrap(), ErrorBudget::Share(0.05));
        for bad in ["0", "0%", "100%", "-3", "x", "5%%", ""] {
            let e = ErrorBudget::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--max-errors {bad}:")), "{e}");
            assert!(e.contains("--max-errors 5%"), "{e}");
        }
    }

    #[test]
    fn a_budget_is_spent_at_its_count_or_past_its_share_of_enough_tries() {
        let count = ErrorBudget::Count(3);
        assert!(!count.spent(2, 2));
        assert!(count.spent(3, 1000));
        let share = ErrorBudget::Share(0.05);
        assert!(
            !share.spent(1, 1),
            "one failure of the first try is not judged"
        );
        assert!(!share.spent(5, 100));
        assert!(share.spent(6, 100));
        assert_eq!(share.describe(), "5%");
    }
}
