//! Unit tests of BBRv3 (see below).
