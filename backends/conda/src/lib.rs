//! The conda environment backend of WSP.
#![warn(missing_docs)]
