pub mod apply_patch;
