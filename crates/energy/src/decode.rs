//! Decoders: bytes as a meter sends them to [`crate::Sample`]s. Each module cites the
//! document its layout comes from; none does I/O.
