//! What a decision reports: every step, the rules that matched and why, and
//! the call's effects. A leaf of the dependency order: the dispatch path
//! writes these, the front doors and the scrubber read them.

use serde::Serialize;

use crate::effects::Effects;
use crate::model::{Decision, Permission};
use crate::policy::RuleKind;

/// The steps of the dispatch path, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// The tool is registered.
    Lookup,
    /// Its scope is granted.
    Scope,
    /// The arguments satisfy its parameters.
    Validate,
    /// The call's effects are computed.
    Effects,
    /// No reject rule matches.
    Reject,
    /// The static permission.
    Permission,
    /// Relax rules may move `prompt` to `allow`.
    Relax,
    /// Sandbox rules take the strictest.
    Sandbox,
    /// The decision.
    Decision,
}

impl Step {
    /// Every step, in order.
    pub const ALL: [Step; 9] = [
        Step::Lookup,
        Step::Scope,
        Step::Validate,
        Step::Effects,
        Step::Reject,
        Step::Permission,
        Step::Relax,
        Step::Sandbox,
        Step::Decision,
    ];

    /// The name used in output.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Step::Lookup => "lookup",
            Step::Scope => "scope",
            Step::Validate => "validate",
            Step::Effects => "effects",
            Step::Reject => "reject",
            Step::Permission => "permission",
            Step::Relax => "relax",
            Step::Sandbox => "sandbox",
            Step::Decision => "decision",
        }
    }
}

/// What one step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The check passed.
    Pass,
    /// The call was rejected here.
    Reject,
    /// Not reached: an earlier step rejected the call.
    Skipped,
    /// The permission or decision is `allow`.
    Allow,
    /// The permission or decision is `prompt`.
    Prompt,
    /// The permission or decision is `deny`.
    Deny,
}

impl Outcome {
    /// The name used in output.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Reject => "reject",
            Outcome::Skipped => "skipped",
            Outcome::Allow => "allow",
            Outcome::Prompt => "prompt",
            Outcome::Deny => "deny",
        }
    }
}

impl From<Decision> for Outcome {
    fn from(d: Decision) -> Self {
        match d {
            Decision::Allow => Outcome::Allow,
            Decision::Prompt => Outcome::Prompt,
            Decision::Deny => Outcome::Deny,
            Decision::Reject => Outcome::Reject,
        }
    }
}

/// One step's record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepRecord {
    /// Which step.
    pub step: Step,
    /// What it did.
    pub outcome: Outcome,
    /// A sentence saying why.
    pub detail: String,
}

/// A rule that matched (or failed closed as matched).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct MatchedRule {
    /// The rule id.
    pub id: String,
    /// Which kind of rule.
    pub kind: RuleKind,
    /// What it contributes: `reject`, `allow` (relax), `prompt` or `deny`.
    pub action: Decision,
    /// The file it is written in.
    pub file: String,
    /// The line of its id.
    pub line: usize,
}

/// A rule whose expression failed at run time.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct RuleError {
    /// The rule id.
    pub id: String,
    /// Which kind of rule.
    pub kind: RuleKind,
    /// The error.
    pub message: String,
    /// How it was counted: sandbox and reject rules as matched, relax rules as not.
    pub counted_as: &'static str,
}

/// The full account of one decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evaluation {
    /// The tool named by the call.
    pub tool: String,
    /// The decision.
    pub decision: Decision,
    /// The static permission (host-imposed for MCP tools); none if not reached.
    pub static_permission: Option<Permission>,
    /// The permission after relax rules; none if not reached.
    pub effective_permission: Option<Permission>,
    /// Why the call was rejected, when it was.
    pub reject_reason: Option<String>,
    /// The reason of the strictest rule or permission that set the decision.
    pub reason: Option<String>,
    /// Rules that matched, sorted by id (then kind).
    pub matched: Vec<MatchedRule>,
    /// Every step, in order.
    pub steps: Vec<StepRecord>,
    /// Rules whose expressions failed; each failed closed.
    pub errors: Vec<RuleError>,
    /// The call's effects, when they were computed (step 4).
    pub effects: Option<Effects>,
    /// Relax rules that read `call` and were not applied because the effects
    /// are not exactly known: (rule id, why).
    pub relax_blocked: Vec<(String, String)>,
}

impl Evaluation {
    pub(crate) fn rejected(
        tool: &str,
        at: Step,
        detail: String,
        mut steps: Vec<StepRecord>,
    ) -> Evaluation {
        steps.push(StepRecord {
            step: at,
            outcome: Outcome::Reject,
            detail: detail.clone(),
        });
        for s in Step::ALL
            .iter()
            .filter(|s| **s > at && **s != Step::Decision)
        {
            steps.push(StepRecord {
                step: *s,
                outcome: Outcome::Skipped,
                detail: format!("not reached: the call was rejected at `{}`", at.as_str()),
            });
        }
        steps.push(StepRecord {
            step: Step::Decision,
            outcome: Outcome::Reject,
            detail: detail.clone(),
        });
        Evaluation {
            tool: tool.to_string(),
            decision: Decision::Reject,
            static_permission: None,
            effective_permission: None,
            reject_reason: Some(detail),
            reason: None,
            matched: Vec::new(),
            steps,
            errors: Vec::new(),
            effects: None,
            relax_blocked: Vec::new(),
        }
    }
}
