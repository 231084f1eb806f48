pub mod audit;
pub mod bisect;
pub mod compare;
pub mod consume;
pub mod drift;
pub mod protocol;
pub mod ranges;
pub mod record;
