pub mod review;
