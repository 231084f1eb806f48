//! What a trial is checked against, decided when it is planned: its dialect's two
//! inventories (what it prints, what it sends to the model API), read before it runs,
//! and what their findings do to it.

use super::check::{Direction, Policy};
use super::inventory::{self, Loaded};
use super::requests;
use crate::dialect::Dialect;
use std::path::{Path, PathBuf};

/// One inventory a trial is checked against: its file (as findings name it) and what it
/// holds, or why it did not load.
#[derive(Debug, Clone)]
pub struct Against {
    pub direction: Direction,
    pub file: PathBuf,
    pub loaded: Loaded,
}

/// A trial's check against the protocol inventory.
#[derive(Debug, Clone)]
pub struct ProtocolCheck {
    /// What the findings do to the trial.
    pub policy: Policy,
    /// The dialect's inventories, printed then sent; none under [`Policy::Off`].
    pub inventories: Vec<Against>,
}

impl ProtocolCheck {
    /// `dialect`'s inventories in the project at `root`, checked under `policy`.
    pub fn load(policy: Policy, root: &Path, dialect: Dialect) -> ProtocolCheck {
        let key = dialect.conventions().expect_key();
        let inventories = match policy {
            Policy::Off => Vec::new(),
            _ => vec![
                Against {
                    direction: Direction::Printed,
                    file: inventory::file_of(key),
                    loaded: inventory::load(root, key),
                },
                Against {
                    direction: Direction::Request,
                    file: requests::file_of(key),
                    loaded: requests::load(root, key),
                },
            ],
        };
        ProtocolCheck {
            policy,
            inventories,
        }
    }

    /// The same inventories under `policy` (none under [`Policy::Off`]).
    pub fn under(&self, policy: Policy) -> ProtocolCheck {
        ProtocolCheck {
            policy,
            inventories: match policy {
                Policy::Off => Vec::new(),
                _ => self.inventories.clone(),
            },
        }
    }
}
