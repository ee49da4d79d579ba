//! What each token is doing where it stands, as far as spacing cares: a `-` that negates or
//! subtracts, a `|` that opens or closes a closure's parameters or separates a refinement, a
//! brace of a refinement type (written tight, `{v: T | p}`) or of an f-string's interpolation,
//! the text of an f-string. Read from the tokens alone, left to right.

use crate::lexer::{Token, TokenKind};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    /// Spaced by its kind alone.
    Plain,
    /// A prefix `-` or `!`: nothing after it.
    Unary,
    /// The `|` before a closure's parameters: nothing after it.
    ClosureOpen,
    /// The `|` after a closure's parameters: nothing before it.
    ClosureClose,
    /// `||` as a closure's empty parameters.
    ClosureEmpty,
    /// A brace of a refinement type, `{v: T | p}`: nothing inside it.
    Tight,
    /// Part of an f-string's text: `f"`, the text between interpolations, the closing `"` and
    /// the braces of each interpolation. Nothing is put next to these inside the f-string.
    FString,
}

/// What the roles are computed with, innermost last.
enum Frame {
    /// Inside an f-string's text.
    FString,
    /// Inside an f-string's `{..}`.
    Interpolation,
    /// Inside a bracket; `tight` for a refinement's brace.
    Bracket { tight: bool },
}

/// The role of each token of `tokens`; an operand starts at each offset of `starts` (sorted).
pub(super) fn roles(tokens: &[Token], starts: &[u32]) -> Vec<Role> {
    let mut roles = vec![Role::Plain; tokens.len()];
    let mut frames: Vec<Frame> = Vec::new();
    // The depth of `frames` at each closure whose closing `|` is still to come.
    let mut closures: Vec<usize> = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| (&tokens[p].kind, roles[p]));
        let operand = starts.binary_search(&token.span.start).is_ok() || starts_operand(prev);
        let in_text = matches!(frames.last(), Some(Frame::FString));
        roles[i] = match &token.kind {
            TokenKind::FStrStart => {
                frames.push(Frame::FString);
                Role::FString
            }
            TokenKind::Str(_) if in_text => Role::FString,
            TokenKind::FStrEnd => {
                frames.pop();
                Role::FString
            }
            TokenKind::LBrace if in_text => {
                frames.push(Frame::Interpolation);
                Role::FString
            }
            TokenKind::RBrace if matches!(frames.last(), Some(Frame::Interpolation)) => {
                frames.pop();
                Role::FString
            }
            TokenKind::LBrace => {
                let tight = refinement_brace(tokens, i);
                frames.push(Frame::Bracket { tight });
                if tight { Role::Tight } else { Role::Plain }
            }
            TokenKind::LParen | TokenKind::LBracket => {
                frames.push(Frame::Bracket { tight: false });
                Role::Plain
            }
            TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => match frames.pop() {
                Some(Frame::Bracket { tight: true }) => Role::Tight,
                _ => Role::Plain,
            },
            TokenKind::Bang => Role::Unary,
            TokenKind::Minus if operand => Role::Unary,
            TokenKind::Pipe if closures.last() == Some(&frames.len()) => {
                closures.pop();
                Role::ClosureClose
            }
            TokenKind::Pipe if operand => {
                closures.push(frames.len());
                Role::ClosureOpen
            }
            TokenKind::PipePipe if operand => Role::ClosureEmpty,
            _ => Role::Plain,
        };
    }
    roles
}

/// Whether an operand starts after `prev` (so a `-` there negates and a `|` opens a closure):
/// at the start, after an opening bracket, a separator, `=`, `:`, `=>`, an operator or a
/// keyword other than `true` and `false`.
fn starts_operand(prev: Option<(&TokenKind, Role)>) -> bool {
    use TokenKind::*;
    let Some((kind, role)) = prev else { return true };
    if role == Role::ClosureClose || role == Role::ClosureEmpty {
        return true;
    }
    match kind {
        LParen | LBracket | LBrace | Comma | Semi | Eq | Colon | FatArrow => true,
        Plus | Minus | Star | Slash | Percent | EqEq | BangEq | Lt | Le | Gt | Ge | AmpAmp | PipePipe | Pipe | Bang
        | Amp => true,
        True | False => false,
        k => is_keyword(k),
    }
}

fn is_keyword(kind: &TokenKind) -> bool {
    use TokenKind::*;
    matches!(
        kind,
        Let | Fn
            | If
            | Else
            | Match
            | For
            | In
            | Type
            | Enum
            | Linear
            | Opaque
            | Measure
            | Capability
            | Tool
            | Const
            | Entry
            | True
            | False
            | As
            | Agent
    )
}

/// Whether the `{` at `at` opens a refinement type, `{v: T | p}`: it follows what a type
/// follows (not a name, which makes it a record or a block), reads `name :`, and has a `|`
/// before its first `,`, `;` or its closing brace.
fn refinement_brace(tokens: &[Token], at: usize) -> bool {
    use TokenKind::*;
    let after_type_position = at
        .checked_sub(1)
        .is_some_and(|p| matches!(tokens[p].kind, Colon | Arrow | LBracket | LParen | Comma | Eq | As));
    let named = matches!(tokens.get(at + 1).map(|t| &t.kind), Some(Ident))
        && matches!(tokens.get(at + 2).map(|t| &t.kind), Some(Colon));
    if !after_type_position || !named {
        return false;
    }
    let mut depth = 0usize;
    for token in &tokens[at + 1..] {
        match token.kind {
            LParen | LBracket | LBrace => depth += 1,
            RParen | RBracket | RBrace if depth == 0 => return false,
            RParen | RBracket | RBrace => depth -= 1,
            Pipe if depth == 0 => return true,
            Comma | Semi if depth == 0 => return false,
            _ => {}
        }
    }
    false
}
