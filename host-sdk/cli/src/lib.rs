//! The clio command-line tool
