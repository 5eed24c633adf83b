//! Reverse mode by source transformation.
