//! The subjects of the cluster bus. A subject carries ids only, never a secret; ids are
//! checked here so that none can add a token (`.`) or a wildcard (`*`, `>`) to a subject.

use roomlink_domain::ids::{ListenerServiceId, is_well_formed};

/// The default first tokens of every subject.
pub const DEFAULT_PREFIX: &str = "roomlink";

/// The subjects under one prefix.
#[derive(Debug, Clone)]
pub struct Subjects {
    prefix: String,
}

impl Subjects {
    /// `None` unless `prefix` is one or more dot-separated ids (`roomlink`, `prod.roomlink`).
    pub fn new(prefix: &str) -> Option<Self> {
        prefix.split('.').all(is_well_formed).then(|| Subjects {
            prefix: prefix.to_owned(),
        })
    }

    /// Where every instance publishes and hears [`ClusterEvent`]s.
    ///
    /// [`ClusterEvent`]: roomlink_domain::cluster::ClusterEvent
    pub fn events(&self) -> String {
        format!("{}.events", self.prefix)
    }

    /// Where the instance holding `listener`'s connection serves requests for it; `None` for
    /// an id that is not `[A-Za-z0-9_-]{1,64}` (ids from storage are, so this is a refusal of
    /// a corrupt id, never an escape).
    pub fn link(&self, listener: &ListenerServiceId) -> Option<String> {
        is_well_formed(listener.as_str()).then(|| format!("{}.links.{}", self.prefix, listener))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_would_change_a_subject_are_refused() {
        let s = Subjects::new("roomlink").unwrap();
        assert_eq!(s.events(), "roomlink.events");
        let id = |t: &str| ListenerServiceId::from_trusted(t.into());
        assert_eq!(s.link(&id("abc-1_F")).unwrap(), "roomlink.links.abc-1_F");
        for bad in ["", "a.b", "*", ">", "a b", "a\r\nPUB x 1", &"x".repeat(65)] {
            assert!(s.link(&id(bad)).is_none(), "{bad:?}");
        }
        assert!(Subjects::new("prod.roomlink").is_some());
        for bad in ["", ".", "a.", "a..b", "a.*", "a.>", "a b"] {
            assert!(Subjects::new(bad).is_none(), "{bad:?}");
        }
    }
}
