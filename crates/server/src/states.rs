//! The states of surveys and cohorts in each service role, and the rules for moving between them,
//! apart from SQL and HTTP: handlers ask a state whether a step is allowed and store the state it
//! returns. Each state is stored as one lowercase word (`as_sql`, and the same word in JSON), the
//! spelling the stores have always used, so stored databases and the HTTP API are unchanged.
//!
//! ```text
//! accepting service (provider, right-masking service), table cohorts:
//!   open ──close──▶ closed ──┬─ provider:  masked | empty | withheld   (the masking outcome)
//!                            └─ right:     sent ──▶ unmasked            (shares handed over, back)
//! provider, share mode, table share_cohorts:
//!   collecting ──▶ masked | empty | withheld
//! collector, table surveys:
//!   open ──close──▶ closing ──▶ released | failed
//! collector, table cohorts:
//!   open ──close──▶ closed (it had participants) | empty
//!   open | closed ──believed hand-over──▶ received | withheld | empty | spoilt
//!                                          (spoilt: the content failed its checks — QA — and
//!                                          the cohort's invitations were reopened)
//!   closed ──left out by the survey team──▶ failed
//!   (a refused hand-over changes nothing: the cohort waits for the genuine one; every settled
//!   state but received is left out of the release and named in the manifest)
//! ```

use orthomask_survey::api::{CohortPhase, SurveyPhase};
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A step a state does not allow.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a {from} {what} cannot {step}")]
pub struct TransitionRefused {
    /// What is in that state ("cohort", "survey").
    pub what: &'static str,
    /// The current state's word.
    pub from: &'static str,
    /// The step asked for.
    pub step: &'static str,
}

/// A stored state word no state has (a damaged or foreign database).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} state {found:?} in the store")]
pub struct UnknownState {
    /// Which kind of state.
    pub what: &'static str,
    /// The stored word.
    pub found: String,
}

/// Declares an enum with its one stored/JSON word per variant, parsing, display and the SQLite
/// conversions.
macro_rules! stored_words {
    ($(#[$meta:meta])* $name:ident, $what:literal { $($(#[$vmeta:meta])* $variant:ident = $word:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $word)] $variant),+
        }

        impl $name {
            /// The word stored in the database and written in JSON.
            pub const fn as_sql(self) -> &'static str {
                match self {
                    $(Self::$variant => $word),+
                }
            }

            /// The state a stored word names.
            ///
            /// # Errors
            /// [`UnknownState`] for any other word.
            pub fn parse(word: &str) -> Result<Self, UnknownState> {
                match word {
                    $($word => Ok(Self::$variant),)+
                    other => Err(UnknownState {
                        what: $what,
                        found: other.to_owned(),
                    }),
                }
            }

        }

        word_conversions!($name);
    };
}

/// Display and the SQLite conversions of a state with `as_sql` and `parse`.
macro_rules! word_conversions {
    ($name:ident) => {
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_sql())
            }
        }

        impl ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(ToSqlOutput::from(self.as_sql()))
            }
        }

        impl FromSql for $name {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                let word = value.as_str()?;
                Self::parse(word).map_err(|e| FromSqlError::Other(Box::new(e)))
            }
        }
    };
}

/// A state the survey-team API shows: its words are the API's (`orthomask_survey::api`, e.g.
/// `SurveyPhase`), mapped variant by variant both ways, so a state on one side only does not
/// compile and the store and the API cannot spell a state two ways. Stored, and written in JSON,
/// as that word.
macro_rules! api_words {
    ($(#[$meta:meta])* $name:ident = $phase:ident, $phase_name:literal, $what:literal { $($(#[$vmeta:meta])* $variant:ident),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(into = $phase_name, from = $phase_name)]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl From<$name> for $phase {
            fn from(state: $name) -> Self {
                match state {
                    $($name::$variant => $phase::$variant),+
                }
            }
        }

        impl From<$phase> for $name {
            fn from(phase: $phase) -> Self {
                match phase {
                    $($phase::$variant => $name::$variant),+
                }
            }
        }

        impl $name {
            /// The word stored in the database and written in JSON: the API's.
            pub fn as_sql(self) -> &'static str {
                $phase::from(self).word()
            }

            /// The state a stored word names.
            ///
            /// # Errors
            /// [`UnknownState`] for any other word.
            pub fn parse(word: &str) -> Result<Self, UnknownState> {
                $phase::ALL
                    .iter()
                    .find(|p| p.word() == word)
                    .map(|&p| Self::from(p))
                    .ok_or_else(|| UnknownState {
                        what: $what,
                        found: word.to_owned(),
                    })
            }
        }

        word_conversions!($name);
        refusals!($name, $what);
    };
}

/// Each refused step of a state names the state's word.
macro_rules! refusals {
    ($name:ident, $what:literal) => {
        impl $name {
            fn refuse(self, step: &'static str) -> TransitionRefused {
                TransitionRefused {
                    what: $what,
                    from: self.as_sql(),
                    step,
                }
            }
        }
    };
}

/// [`stored_words!`] for a state with transitions ([`refusals!`]).
macro_rules! stored_state {
    ($(#[$meta:meta])* $name:ident, $what:literal { $($body:tt)+ }) => {
        stored_words!($(#[$meta])* $name, $what { $($body)+ });
        refusals!($name, $what);
    };
}

stored_state!(
    /// A cohort at an accepting service (the masking service provider or a right-masking
    /// service): table `cohorts` of `crate::intake`.
    IntakeCohort, "cohort" {
        /// Taking uploads.
        Open = "open",
        /// Full or closed by the collector; its uploads wait to be masked or handed over.
        Closed = "closed",
        /// Provider: masked and handed to the collector.
        Masked = "masked",
        /// Provider: closed without uploads.
        Empty = "empty",
        /// Provider: too few uploads to release; nothing handed over.
        Withheld = "withheld",
        /// Right-masking service: its masked shares were handed to the provider.
        Sent = "sent",
        /// Right-masking service: the provider's left-masked block came back, unmasked and
        /// handed to the collector.
        Unmasked = "unmasked",
    }
);

impl IntakeCohort {
    /// Whether uploads are accepted.
    pub fn takes_uploads(self) -> bool {
        self == Self::Open
    }

    /// Close the cohort (full, or closed by the collector). Closing a closed cohort again is
    /// allowed and changes nothing (retries); a cohort already processed cannot be closed.
    ///
    /// # Errors
    /// [`TransitionRefused`] past `closed`.
    pub fn close(self) -> Result<Self, TransitionRefused> {
        match self {
            Self::Open | Self::Closed => Ok(Self::Closed),
            other => Err(other.refuse("be closed")),
        }
    }

    /// The provider's outcome of masking a closed cohort.
    ///
    /// # Errors
    /// [`TransitionRefused`] unless the cohort is `closed`.
    pub fn masked(self, outcome: MaskingResult) -> Result<Self, TransitionRefused> {
        match self {
            Self::Closed => Ok(match outcome {
                MaskingResult::Masked => Self::Masked,
                MaskingResult::Empty => Self::Empty,
                MaskingResult::Withheld => Self::Withheld,
            }),
            other => Err(other.refuse("be masked")),
        }
    }

    /// A right-masking service handed the cohort's masked shares to the provider.
    ///
    /// # Errors
    /// [`TransitionRefused`] unless the cohort is `closed`.
    pub fn sent(self) -> Result<Self, TransitionRefused> {
        match self {
            Self::Closed => Ok(Self::Sent),
            other => Err(other.refuse("be sent")),
        }
    }

    /// A right-masking service unmasked the provider's block and handed it on. A block may
    /// arrive again (a retry of the provider) and is then answered as before.
    ///
    /// # Errors
    /// [`TransitionRefused`] unless the cohort is `sent` or already `unmasked`.
    pub fn unmasked(self) -> Result<Self, TransitionRefused> {
        match self {
            Self::Sent | Self::Unmasked => Ok(Self::Unmasked),
            other => Err(other.refuse("take a left-masked block")),
        }
    }
}

/// What masking a cohort came to (the states it leads to at the provider).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaskingResult {
    /// Masked and handed over.
    Masked,
    /// No uploads.
    Empty,
    /// Too few uploads to release.
    Withheld,
}

stored_state!(
    /// The provider's share blocks of a cohort in share mode: table `share_cohorts`.
    ShareCohort, "share cohort" {
        /// Waiting for every right-masking service's block.
        Collecting = "collecting",
        /// Left-masked and handed back to the right-masking services.
        Masked = "masked",
        /// No participant's shares reached every service.
        Empty = "empty",
        /// Too few complete participants to release.
        Withheld = "withheld",
    }
);

impl ShareCohort {
    /// Whether blocks from right-masking services are still taken.
    pub fn takes_blocks(self) -> bool {
        self == Self::Collecting
    }

    /// The outcome once every block arrived.
    ///
    /// # Errors
    /// [`TransitionRefused`] unless the cohort is collecting.
    pub fn settle(self, outcome: MaskingResult) -> Result<Self, TransitionRefused> {
        match self {
            Self::Collecting => Ok(match outcome {
                MaskingResult::Masked => Self::Masked,
                MaskingResult::Empty => Self::Empty,
                MaskingResult::Withheld => Self::Withheld,
            }),
            other => Err(other.refuse("be masked")),
        }
    }
}

api_words!(
    /// A survey at the data collector: table `surveys`.
    SurveyState = SurveyPhase, "SurveyPhase", "survey" {
        /// Handing out definitions and taking participants.
        Open,
        /// Closed by the survey team; waiting for its cohorts' hand-overs.
        Closing,
        /// The release and manifest are published.
        Released,
        /// No release could be made (every cohort failed or was withheld).
        Failed,
    }
);

impl SurveyState {
    /// Whether participants may join (definitions are handed out).
    pub fn takes_participants(self) -> bool {
        self == Self::Open
    }

    /// The survey team closes the survey.
    ///
    /// # Errors
    /// [`TransitionRefused`] unless it is open.
    pub fn close(self) -> Result<Self, TransitionRefused> {
        match self {
            Self::Open => Ok(Self::Closing),
            other => Err(other.refuse("be closed")),
        }
    }

    /// Every cohort settled: published, or failed when nothing could be released.
    ///
    /// # Errors
    /// [`TransitionRefused`] unless it is closing.
    pub fn finish(self, released: bool) -> Result<Self, TransitionRefused> {
        match self {
            Self::Closing if released => Ok(Self::Released),
            Self::Closing => Ok(Self::Failed),
            other => Err(other.refuse("be released")),
        }
    }
}

api_words!(
    /// A cohort at the data collector: table `cohorts`.
    CollectorCohort = CohortPhase, "CohortPhase", "cohort" {
        /// Taking participants.
        Open,
        /// Closed with participants; waiting for its hand-over.
        Closed,
        /// Closed before anyone joined, or handed over without records.
        Empty,
        /// Unmasked, QA passed; its data wait for the release.
        Received,
        /// Too few records to release (the provider's decision, believed against the lists).
        Withheld,
        /// Its believed hand-over failed the content checks (QA: someone sent invalid data);
        /// left out of the release, its invitations reopened (issue 20 §8).
        Spoilt,
        /// Left out by the survey team (a hand-over that never came or was never believed).
        Failed,
    }
);

/// What a participant's device is told about its cohort: the one word of
/// `orthomask_survey::fate` (`GET /api/surveys/{id}/cohorts/{k}/fate`).
pub use orthomask_survey::fate::Fate;

/// How a believed hand-over settles a cohort at the collector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settlement {
    /// Unmasked, QA passed.
    Received,
    /// No records.
    Empty,
    /// Too few records.
    Withheld,
    /// The content failed its checks.
    Spoilt,
}

impl CollectorCohort {
    /// Whether participants may still join.
    pub fn takes_participants(self) -> bool {
        self == Self::Open
    }

    /// The states whose outcome is final for the release.
    pub const SETTLED: [Self; 5] = [
        Self::Received,
        Self::Empty,
        Self::Withheld,
        Self::Spoilt,
        Self::Failed,
    ];

    /// Whether its outcome is final for the release: `received`, `empty`, `withheld`,
    /// `spoilt` or `failed`.
    pub fn is_settled(self) -> bool {
        Self::SETTLED.contains(&self)
    }

    /// [`Self::SETTLED`] as an SQL list of their words, `'received', 'empty', …`, for queries
    /// that select unsettled cohorts.
    pub fn settled_sql_list() -> String {
        Self::SETTLED
            .iter()
            .map(|s| format!("'{}'", s.as_sql()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// What the cohort's participants are told of it.
    pub fn fate(self) -> Fate {
        match self {
            Self::Open => Fate::Open,
            Self::Closed => Fate::Processing,
            Self::Received => Fate::Included,
            Self::Withheld => Fate::Withheld,
            Self::Empty => Fate::Empty,
            Self::Spoilt => Fate::Spoilt,
            Self::Failed => Fate::LeftOut,
        }
    }

    /// Settle the cohort by a believed hand-over.
    ///
    /// # Errors
    /// [`TransitionRefused`] when it is already settled.
    pub fn settle(self, settlement: Settlement) -> Result<Self, TransitionRefused> {
        if self.is_settled() {
            return Err(self.refuse("be settled again"));
        }
        Ok(match settlement {
            Settlement::Received => Self::Received,
            Settlement::Empty => Self::Empty,
            Settlement::Withheld => Self::Withheld,
            Settlement::Spoilt => Self::Spoilt,
        })
    }

    /// The survey team leaves a closed cohort out (its hand-over never came, or was never
    /// believed).
    ///
    /// # Errors
    /// [`TransitionRefused`] unless it is closed.
    pub fn leave_out(self) -> Result<Self, TransitionRefused> {
        match self {
            Self::Closed => Ok(Self::Failed),
            other => Err(other.refuse("be left out")),
        }
    }

    /// Close the cohort: `closed` when anyone joined (`opened`), `empty` otherwise.
    ///
    /// # Errors
    /// [`TransitionRefused`] unless it is open.
    pub fn close(self, opened: bool) -> Result<Self, TransitionRefused> {
        match self {
            Self::Open if opened => Ok(Self::Closed),
            Self::Open => Ok(Self::Empty),
            other => Err(other.refuse("be closed")),
        }
    }
}

stored_words!(
    /// What a hand-over in a service's outbox is (`crate::outbox`, column `kind`): a typo can
    /// no longer skip erasing what was delivered.
    OutboxKind, "outbox kind" {
        /// Provider → collector: a cohort's masked batch or its outcome.
        CohortResult = "cohort-result",
        /// Right-masking service → provider: its block `Xⁱ Bᵢ`.
        ShareBlock = "share-block",
        /// Provider → right-masking service: `A Xⁱ Bᵢ`.
        LeftMasked = "left-masked",
        /// Right-masking service → collector: its masked part.
        SharePart = "share-part",
        /// Right-masking service → the next one: its partial unmasking key and ring seed.
        HandOn = "hand-on",
    }
);

stored_state!(
    /// A hand-over waiting in a service's outbox (`crate::outbox`, column `state`).
    OutboxState, "outbox item" {
        /// Waiting to be sent, or to be sent again after a transient failure.
        Pending = "pending",
        /// The peer took it.
        Delivered = "delivered",
        /// The peer refused its content; it waits for the administrator.
        Rejected = "rejected",
    }
);

impl OutboxState {
    /// The peer took the item.
    ///
    /// # Errors
    /// [`TransitionRefused`] unless it is pending.
    pub fn deliver(self) -> Result<Self, TransitionRefused> {
        match self {
            Self::Pending => Ok(Self::Delivered),
            other => Err(other.refuse("be delivered")),
        }
    }

    /// The peer refused the item's content.
    ///
    /// # Errors
    /// [`TransitionRefused`] unless it is pending.
    pub fn reject(self) -> Result<Self, TransitionRefused> {
        match self {
            Self::Pending => Ok(Self::Rejected),
            other => Err(other.refuse("be rejected")),
        }
    }

    /// The administrator puts a refused item back in the queue.
    ///
    /// # Errors
    /// [`TransitionRefused`] unless it was rejected.
    pub fn requeue(self) -> Result<Self, TransitionRefused> {
        match self {
            Self::Rejected => Ok(Self::Pending),
            other => Err(other.refuse("be requeued")),
        }
    }
}

/// What the collector asks the accepting services to do with a cohort
/// (`POST /api/peer/surveys/{id}/cohorts/{k}/{open|close}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CohortStep {
    /// Start taking uploads (before any participant of the cohort gets its definition).
    Open,
    /// Stop taking uploads and process what arrived.
    Close,
}

impl CohortStep {
    /// The last segment of the peer route.
    pub fn path(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Close => "close",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The states the API words are stored under the words databases have always held (a
    /// stored survey must read back), and each word names its state and no other.
    #[test]
    fn the_api_states_keep_the_stored_words() {
        let surveys = ["open", "closing", "released", "failed"];
        for word in surveys {
            assert_eq!(SurveyState::parse(word).unwrap().as_sql(), word);
        }
        let cohorts = [
            "open", "closed", "empty", "received", "withheld", "spoilt", "failed",
        ];
        for word in cohorts {
            assert_eq!(CollectorCohort::parse(word).unwrap().as_sql(), word);
        }
        assert_eq!(
            (SurveyPhase::ALL.len(), CohortPhase::ALL.len()),
            (surveys.len(), cohorts.len())
        );
        assert_eq!(
            CollectorCohort::parse("handed_over"),
            Err(UnknownState {
                what: "cohort",
                found: "handed_over".into()
            })
        );
        assert_eq!(
            serde_json::to_value(CollectorCohort::Spoilt).unwrap(),
            serde_json::json!("spoilt")
        );
    }
    use rusqlite::Connection;

    #[test]
    fn accepting_cohorts_follow_the_diagram() {
        use IntakeCohort::*;
        assert!(Open.takes_uploads() && !Closed.takes_uploads());
        assert_eq!(Open.close(), Ok(Closed));
        assert_eq!(Closed.close(), Ok(Closed));
        assert!(Masked.close().is_err() && Sent.close().is_err());
        assert_eq!(Closed.masked(MaskingResult::Masked), Ok(Masked));
        assert_eq!(Closed.masked(MaskingResult::Empty), Ok(Empty));
        assert_eq!(Closed.masked(MaskingResult::Withheld), Ok(Withheld));
        assert!(Open.masked(MaskingResult::Masked).is_err());
        assert_eq!(Closed.sent(), Ok(Sent));
        assert!(Open.sent().is_err());
        assert_eq!(Sent.unmasked(), Ok(Unmasked));
        assert_eq!(Unmasked.unmasked(), Ok(Unmasked));
        let refused = Closed.unmasked().unwrap_err();
        assert_eq!(
            refused.to_string(),
            "a closed cohort cannot take a left-masked block"
        );
    }

    #[test]
    fn outbox_items_are_delivered_or_rejected_once_and_requeued_by_hand() {
        use OutboxState::*;
        assert_eq!(Pending.deliver(), Ok(Delivered));
        assert_eq!(Pending.reject(), Ok(Rejected));
        assert_eq!(Rejected.requeue(), Ok(Pending));
        assert!(Delivered.reject().is_err() && Delivered.requeue().is_err());
        assert!(Rejected.deliver().is_err() && Pending.requeue().is_err());
    }

    #[test]
    fn share_cohorts_collect_then_settle_once() {
        use ShareCohort::*;
        assert!(Collecting.takes_blocks() && !Masked.takes_blocks());
        assert_eq!(Collecting.settle(MaskingResult::Withheld), Ok(Withheld));
        assert!(Masked.settle(MaskingResult::Masked).is_err());
    }

    #[test]
    fn surveys_close_once_and_finish_once() {
        use SurveyState::*;
        assert!(Open.takes_participants() && !Closing.takes_participants());
        assert_eq!(Open.close(), Ok(Closing));
        assert_eq!(
            Released.close().unwrap_err().to_string(),
            "a released survey cannot be closed"
        );
        assert_eq!(Closing.finish(true), Ok(Released));
        assert_eq!(Closing.finish(false), Ok(Failed));
        assert!(Open.finish(true).is_err() && Released.finish(true).is_err());
    }

    #[test]
    fn collector_cohorts_close_and_settle() {
        use CollectorCohort::*;
        assert_eq!(Open.close(true), Ok(Closed));
        assert_eq!(Open.close(false), Ok(Empty));
        assert!(Closed.close(true).is_err());
        let settled: Vec<_> = [Open, Closed, Empty, Received, Withheld, Spoilt, Failed]
            .into_iter()
            .filter(|s| s.is_settled())
            .collect();
        assert_eq!(settled, [Empty, Received, Withheld, Spoilt, Failed]);
        assert_eq!(Closed.settle(Settlement::Spoilt), Ok(Spoilt));
        assert_eq!(Open.settle(Settlement::Received), Ok(Received));
        assert!(Spoilt.settle(Settlement::Received).is_err());
        assert_eq!(Closed.leave_out(), Ok(Failed));
        assert!(Received.leave_out().is_err() && Open.leave_out().is_err());
    }

    /// Every state round-trips through SQLite and JSON under its one word, and an unknown
    /// stored word is a typed error, not a panic.
    #[test]
    fn states_round_trip_through_sqlite_and_json() {
        let c = Connection::open_in_memory().unwrap();
        c.execute("CREATE TABLE t (status TEXT NOT NULL)", [])
            .unwrap();
        for s in [
            CollectorCohort::Open,
            CollectorCohort::Closed,
            CollectorCohort::Empty,
            CollectorCohort::Received,
            CollectorCohort::Withheld,
            CollectorCohort::Spoilt,
            CollectorCohort::Failed,
        ] {
            c.execute("DELETE FROM t", []).unwrap();
            c.execute("INSERT INTO t VALUES (?1)", [s]).unwrap();
            let back: CollectorCohort = c
                .query_row("SELECT status FROM t", [], |r| r.get(0))
                .unwrap();
            assert_eq!(back, s);
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_sql());
        }
        for s in [IntakeCohort::Sent, IntakeCohort::Unmasked] {
            assert_eq!(IntakeCohort::parse(s.as_sql()), Ok(s));
        }
        assert_eq!(
            ShareCohort::parse("collecting"),
            Ok(ShareCohort::Collecting)
        );
        assert_eq!(SurveyState::parse("closing"), Ok(SurveyState::Closing));
        c.execute("UPDATE t SET status = 'exploded'", []).unwrap();
        let e = c
            .query_row("SELECT status FROM t", [], |r| r.get::<_, SurveyState>(0))
            .unwrap_err();
        assert!(
            e.to_string().contains("unknown survey state \"exploded\""),
            "{e}"
        );
    }
}
