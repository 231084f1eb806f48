pub mod audit;
pub mod bisect;
pub mod compare;
pub mod drift;
pub mod protocol;
pub mod record;
