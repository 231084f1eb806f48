pub mod drift;
pub mod record;
