//! The --json records blast and drop write, as types: the parts a record
//! embeds that come from the control channel (`window`) and the step's
//! (`step`). No EAL and no protocol here, so that what reads a record
//! (`blast report`, the ladder tables) depends on neither.

pub mod step;
pub mod window;
