pub mod audit;
pub mod compare;
pub mod drift;
pub mod record;
