//! Renderers for [`Diagnostic`]s: human (source snippet with carets), concise (one line per
//! diagnostic, for models) and JSON (a stable schema, see `docs/diagnostics.md`). (To be written.)
