// The external scanner of the Cordon grammar: block comments, which nest (`/* a /* b */ c */`,
// as in Cordon's lexer), so a regular expression cannot match them.
//
// Inside a string (where the grammar makes `_in_string` valid) `/*` is text: the grammar's own
// lexer reads it. `_error_sentinel` appears nowhere in the grammar, so it is valid only while
// the parser recovers from an error, when every token is: comments are read then.

#include "tree_sitter/parser.h"

#include <stdbool.h>

enum TokenType {
  BLOCK_COMMENT,
  IN_STRING,
  ERROR_SENTINEL,
};

void *tree_sitter_cordon_external_scanner_create(void) { return NULL; }

void tree_sitter_cordon_external_scanner_destroy(void *payload) { (void)payload; }

unsigned tree_sitter_cordon_external_scanner_serialize(void *payload, char *buffer) {
  (void)payload;
  (void)buffer;
  return 0;
}

void tree_sitter_cordon_external_scanner_deserialize(void *payload, const char *buffer, unsigned length) {
  (void)payload;
  (void)buffer;
  (void)length;
}

static bool is_space(int32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == 0xFEFF;
}

bool tree_sitter_cordon_external_scanner_scan(void *payload, TSLexer *lexer, const bool *valid_symbols) {
  (void)payload;
  bool recovering = valid_symbols[ERROR_SENTINEL];
  if (!valid_symbols[BLOCK_COMMENT] || (valid_symbols[IN_STRING] && !recovering)) {
    return false;
  }
  while (is_space(lexer->lookahead)) {
    lexer->advance(lexer, true);
  }
  if (lexer->lookahead != '/') {
    return false;
  }
  lexer->advance(lexer, false);
  if (lexer->lookahead != '*') {
    return false;
  }
  lexer->advance(lexer, false);
  unsigned depth = 1;
  while (depth > 0) {
    if (lexer->eof(lexer)) {
      // Unterminated: not a comment (Cordon's lexer reports it).
      return false;
    }
    if (lexer->lookahead == '/') {
      lexer->advance(lexer, false);
      if (lexer->lookahead == '*') {
        lexer->advance(lexer, false);
        depth++;
      }
    } else if (lexer->lookahead == '*') {
      lexer->advance(lexer, false);
      if (lexer->lookahead == '/') {
        lexer->advance(lexer, false);
        depth--;
      }
    } else {
      lexer->advance(lexer, false);
    }
  }
  lexer->result_symbol = BLOCK_COMMENT;
  return true;
}
