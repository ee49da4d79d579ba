//! The lexer. (To be written.)
