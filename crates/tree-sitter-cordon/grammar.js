/**
 * @file A tree-sitter grammar for Cordon, the agent-sandbox language.
 * @license Apache-2.0
 *
 * It follows the language's own parser (crates/cordon-syntax: lexer.rs, parser.rs and
 * parser/*.rs): the same tokens, the same operator precedence and associativity, and the same
 * statement rules. It is for editors (highlighting, folding, navigation), so it accepts a little
 * more than Cordon does where being exact would take context a grammar does not have (a `(` at
 * the start of a line, a record name's case, the nesting limit). Every program of the repository
 * that Cordon's parser accepts parses here without an error (tests/corpus.rs).
 *
 * src/ is generated from this file by `tree-sitter generate`; see README.md.
 */

/// <reference types="tree-sitter-cli/dsl" />
// @ts-check

// Binding powers, as in parser.rs (`binop`, `CAST_PREC`): every binary operator is left
// associative and `as` binds tighter than all of them. Prefix operators bind tighter than `as`
// (`-x as Float` is `(-x) as Float`), postfix ones (calls, fields, indexes) tightest.
const PREC = {
  closure: -1,
  or: 1,
  and: 2,
  compare: 3,
  additive: 4,
  multiplicative: 5,
  cast: 6,
  unary: 7,
  postfix: 8,
  method: 9,
  // A statement that starts with `if`, `match`, `for` or `{` ends at its `}` unless a `.`
  // follows (parser.rs, `block_like_stmt`).
  statement: 20,
};

/**
 * Zero or more `rule`s separated by commas, with an optional trailing comma.
 *
 * @param {RuleOrLiteral} rule
 */
function commaSep(rule) {
  return optional(commaSep1(rule));
}

/**
 * One or more `rule`s separated by commas, with an optional trailing comma.
 *
 * @param {RuleOrLiteral} rule
 */
function commaSep1(rule) {
  return seq(rule, repeat(seq(',', rule)), optional(','));
}

module.exports = grammar({
  name: 'cordon',

  extras: $ => [/\s/, /\uFEFF/, $.line_comment, $.doc_comment, $.block_comment],

  // Nested block comments need a counter; the scanner also knows when it is inside a string,
  // where `/*` is text.
  externals: $ => [$.block_comment, $._in_string, $._error_sentinel],

  word: $ => $.identifier,

  inline: $ => [$._type_identifier, $._field_identifier],

  // Cordon's keywords (lexer.rs, `TokenKind::keyword`) are never names, not even where a name is
  // all that may come (`let fn = 1`). `release`, `to`, `with` and `to_labeled` are words that mean
  // something in one place only, and names everywhere else.
  reserved: {
    global: _ => [
      'let', 'fn', 'if', 'else', 'match', 'for', 'in', 'type', 'enum', 'linear', 'opaque', 'measure',
      'capability', 'tool', 'const', 'entry', 'true', 'false', 'as', 'agent', '_',
    ],
  },

  supertypes: $ => [$._expression, $._type, $._pattern, $._item],

  conflicts: $ => [
    // A match arm whose value ends with a block (`A => if c { .. } else { .. }`) needs no `,`:
    // a `(` or `-` after it starts either the next arm's pattern or continues the value, and
    // only what comes later tells (parser.rs reads on as an expression, except across a line
    // for `(`).
    [$._expression, $.match_arm],
    // A name before a `{` where a block may follow: see `record_expression`.
    [$._expression, $.record_expression],
    [$._contextual_keyword, $.labeled_block],
  ],

  rules: {
    // Declarations and statements in any order; the last expression may lack its `;` and be
    // followed by declarations only (parser.rs, `module`).
    source_file: $ => seq(
      repeat(choice($._item, $._statement, $.empty_statement)),
      optional(seq(
        field('value', $._expression),
        repeat(seq($._item, repeat($.empty_statement))),
      )),
    ),

    empty_statement: _ => ';',

    // ---- Declarations ----------------------------------------------------------------------

    _item: $ => choice(
      $.type_item,
      $.record_item,
      $.opaque_type_item,
      $.linear_type_item,
      $.enum_item,
      $.measure_item,
      $.capability_item,
      $.function_item,
      $.const_item,
      $.entry_item,
      $.release_item,
    ),

    // `type X = T`, including a refinement `type Pos = {v: Int | v > 0}`.
    type_item: $ => seq(
      'type',
      field('name', $._type_identifier),
      '=',
      field('type', $._type),
    ),

    // `type X = { f: T, .. }`
    record_item: $ => seq(
      'type',
      field('name', $._type_identifier),
      '=',
      field('body', $.field_declaration_list),
    ),

    field_declaration_list: $ => seq('{', commaSep($.field_declaration), '}'),

    field_declaration: $ => seq(
      field('name', $._field_identifier),
      ':',
      field('type', $._type),
      repeat($.annotation),
    ),

    // `opaque type X`, `opaque type X[T, U]`, `opaque type X = { f: T }`
    opaque_type_item: $ => prec.right(seq(
      'opaque',
      'type',
      field('name', $._type_identifier),
      optional(choice(
        field('parameters', $.type_parameters),
        seq('=', field('body', $.field_declaration_list)),
      )),
    )),

    type_parameters: $ => seq('[', commaSep($._type_identifier), ']'),

    linear_type_item: $ => seq('linear', 'type', field('name', $._type_identifier)),

    enum_item: $ => seq(
      'enum',
      field('name', $._type_identifier),
      field('body', $.enum_variant_list),
    ),

    enum_variant_list: $ => seq('{', commaSep($.enum_variant), '}'),

    enum_variant: $ => seq(
      field('name', $.identifier),
      optional(field('payload', $.variant_payload)),
    ),

    variant_payload: $ => seq('(', commaSep($._type), ')'),

    // `measure m(x: T) -> U` or `measure m(x: T) -> U = literal`
    measure_item: $ => seq(
      'measure',
      field('name', $.identifier),
      field('parameters', $.parameters),
      '->',
      field('return_type', $._type),
      optional(seq('=', field('default', $._expression))),
    ),

    // Tools, each with its annotations before or after it.
    capability_item: $ => seq(
      'capability',
      field('name', $._type_identifier),
      field('body', $.capability_body),
    ),

    capability_body: $ => seq(
      '{',
      repeat(choice($.tool_declaration, $.annotation, ',', ';')),
      '}',
    ),

    tool_declaration: $ => seq(
      'tool',
      field('name', $.identifier),
      field('parameters', $.parameters),
      optional(seq('->', field('return_type', $._type))),
    ),

    function_item: $ => seq(
      'fn',
      field('name', $.identifier),
      field('parameters', $.parameters),
      optional(seq('->', field('return_type', $._type))),
      field('body', $.block),
    ),

    parameters: $ => seq('(', commaSep($.parameter), ')'),

    parameter: $ => seq(
      field('name', choice($.identifier, $.wildcard)),
      ':',
      field('type', $._type),
    ),

    const_item: $ => seq(
      'const',
      field('name', $.identifier),
      ':',
      field('type', $._type),
      '=',
      field('value', $._expression),
    ),

    entry_item: $ => seq(
      'entry',
      field('parameters', $.parameters),
      '->',
      field('return_type', $._type),
    ),

    // `release "group" to L @approval(..)`; `release` and `to` are words, not keywords.
    release_item: $ => seq(
      'release',
      field('group', $.string),
      'to',
      field('label', $._expression),
      repeat($.annotation),
    ),

    // `@name` or `@name(arg, key = arg, ..)`
    annotation: $ => prec.right(seq(
      '@',
      field('name', $.identifier),
      optional(field('arguments', $.annotation_arguments)),
    )),

    annotation_arguments: $ => seq(
      '(',
      commaSep(choice($.annotation_argument, $._expression)),
      ')',
    ),

    annotation_argument: $ => seq(
      field('name', $.identifier),
      '=',
      field('value', $._expression),
    ),

    // ---- Statements ------------------------------------------------------------------------

    _statement: $ => choice($.let_statement, $.expression_statement),

    let_statement: $ => seq(
      'let',
      field('pattern', $._pattern),
      optional(seq(':', field('type', $._type))),
      '=',
      field('value', $._expression),
      ';',
    ),

    expression_statement: $ => choice(
      seq($._expression, ';'),
      prec(PREC.statement, $._expression_ending_with_block),
    ),

    _expression_ending_with_block: $ => choice(
      $.block,
      $.if_expression,
      $.match_expression,
      $.for_expression,
    ),

    block: $ => seq(
      '{',
      repeat(choice($._statement, $.empty_statement)),
      optional(field('value', $._expression)),
      '}',
    ),

    // ---- Expressions -----------------------------------------------------------------------

    _expression: $ => choice(
      $.integer_literal,
      $.float_literal,
      $.decimal_literal,
      $.boolean_literal,
      $.string,
      $.format_string,
      $.unit_expression,
      $.identifier,
      alias($._contextual_keyword, $.identifier),
      $.scoped_identifier,
      $.parenthesized_expression,
      $.tuple_expression,
      $.list_expression,
      $.record_expression,
      $.field_expression,
      $.index_expression,
      $.call_expression,
      $.method_call_expression,
      $.unary_expression,
      $.binary_expression,
      $.cast_expression,
      $.closure_expression,
      $.hole_expression,
      $.labeled_block,
      $._expression_ending_with_block,
    ),

    // Words that are keywords in one place only and names everywhere else.
    _contextual_keyword: _ => choice('release', 'to_labeled'),

    boolean_literal: _ => choice('true', 'false'),

    integer_literal: _ => /[0-9]+/,

    float_literal: _ => token(choice(
      /[0-9]+\.[0-9]+([eE][+-]?[0-9]+)?/,
      /[0-9]+[eE][+-]?[0-9]+/,
    )),

    // `12.50d`: an exact decimal; no exponent.
    decimal_literal: _ => /[0-9]+(\.[0-9]+)?d/,

    string: $ => seq(
      '"',
      repeat(choice($.string_content, $.escape_sequence, $._in_string)),
      token.immediate('"'),
    ),

    string_content: _ => token.immediate(prec(1, /[^"\\]+/)),

    escape_sequence: _ => token.immediate(seq(
      '\\',
      choice(/[ntr"\\0]/, /u\{[0-9a-fA-F]{1,6}\}/),
    )),

    // `f"{n} in {repo.name}"`; `{{` and `}}` are braces.
    format_string: $ => seq(
      'f"',
      repeat(choice(
        alias($._format_string_content, $.string_content),
        $.escape_sequence,
        $.interpolation,
        $._in_string,
      )),
      token.immediate('"'),
    ),

    _format_string_content: _ => token.immediate(prec(1, /([^"\\{]|\{\{)+/)),

    interpolation: $ => seq(token.immediate('{'), field('value', $._expression), '}'),

    unit_expression: _ => seq('(', ')'),

    // `Enum::Variant`
    scoped_identifier: $ => seq(
      field('path', alias($.identifier, $.type_identifier)),
      '::',
      field('name', $.identifier),
    ),

    parenthesized_expression: $ => seq('(', $._expression, ')'),

    tuple_expression: $ => seq(
      '(',
      $._expression,
      ',',
      commaSep($._expression),
      ')',
    ),

    list_expression: $ => seq('[', commaSep($._expression), ']'),

    // `Name { field: value, shorthand }`. Where a `{` may start a body or a statement (after
    // the head of an `if`, a `match` or a `for`, after a `const`'s value) a name before it is
    // read both ways, and the way that fails is dropped; where both succeed (`const X: T = T {}`)
    // it is a record, as parser.rs reads it everywhere but in the head of an `if`, a `match` or a
    // `for`, where only a block would succeed.
    record_expression: $ => prec.dynamic(1, seq(
      field('name', $._type_identifier),
      field('body', $.field_initializer_list),
    )),

    field_initializer_list: $ => seq(
      '{',
      commaSep(choice($.field_initializer, $.shorthand_field_initializer)),
      '}',
    ),

    field_initializer: $ => seq(
      field('field', $._field_identifier),
      ':',
      field('value', $._expression),
    ),

    shorthand_field_initializer: $ => $.identifier,

    // `base.name`, `base.0` (and `p.0.1`: two tuple fields).
    field_expression: $ => prec(PREC.postfix, seq(
      field('value', $._expression),
      '.',
      field('field', choice($._field_identifier, alias($.integer_literal, $.field_index))),
    )),

    index_expression: $ => prec(PREC.postfix, seq(
      field('value', $._expression),
      '[',
      field('index', $._expression),
      ']',
    )),

    call_expression: $ => prec(PREC.postfix, seq(
      field('function', $._expression),
      field('arguments', $.arguments),
    )),

    // `receiver.method(args)`
    method_call_expression: $ => prec(PREC.method, seq(
      field('receiver', $._expression),
      '.',
      field('method', $.identifier),
      field('arguments', $.arguments),
    )),

    arguments: $ => seq('(', commaSep($._expression), ')'),

    unary_expression: $ => prec(PREC.unary, seq(
      field('operator', choice('-', '!')),
      field('operand', $._expression),
    )),

    binary_expression: $ => {
      /** @type {[number, string][]} */
      const table = [
        [PREC.or, '||'],
        [PREC.and, '&&'],
        [PREC.compare, '=='],
        [PREC.compare, '!='],
        [PREC.compare, '<'],
        [PREC.compare, '<='],
        [PREC.compare, '>'],
        [PREC.compare, '>='],
        [PREC.additive, '+'],
        [PREC.additive, '-'],
        [PREC.multiplicative, '*'],
        [PREC.multiplicative, '/'],
        [PREC.multiplicative, '%'],
      ];
      return choice(...table.map(([precedence, operator]) => prec.left(precedence, seq(
        field('left', $._expression),
        field('operator', operator),
        field('right', $._expression),
      ))));
    },

    // `e as T`
    cast_expression: $ => prec.left(PREC.cast, seq(
      field('value', $._expression),
      'as',
      field('type', $._type),
    )),

    // `|x, y: Int| body`, `|| body`, `|x| -> T { .. }`; the body extends as far as it can.
    closure_expression: $ => prec(PREC.closure, seq(
      field('parameters', $.closure_parameters),
      choice(
        field('body', $._expression),
        seq('->', field('return_type', $._type), field('body', $.block)),
      ),
    )),

    closure_parameters: $ => choice(
      '||',
      seq('|', commaSep($.closure_parameter), '|'),
    ),

    closure_parameter: $ => seq(
      field('name', choice($.identifier, $.wildcard)),
      optional(seq(':', field('type', $._type))),
    ),

    // `agent[T](task, args..)` or `agent(task, args..)`: a typed hole a model fills.
    hole_expression: $ => seq(
      'agent',
      optional(seq('[', field('type', $._type), ']')),
      field('arguments', $.arguments),
    ),

    // `to_labeled { .. }`; read both ways where a `{` may follow a name, as a record is.
    labeled_block: $ => prec.dynamic(1, seq('to_labeled', field('body', $.block))),

    if_expression: $ => seq(
      'if',
      field('condition', $._expression),
      field('consequence', $.block),
      optional(field('alternative', $.else_clause)),
    ),

    else_clause: $ => seq('else', choice($.block, $.if_expression)),

    match_expression: $ => seq(
      'match',
      field('value', $._expression),
      field('body', $.match_block),
    ),

    // Arms are separated by `,`; one whose value ends with a block needs none.
    match_block: $ => seq(
      '{',
      repeat($.match_arm),
      optional(alias($.last_match_arm, $.match_arm)),
      '}',
    ),

    match_arm: $ => seq(
      field('pattern', $._pattern),
      optional(seq('if', field('guard', $._expression))),
      '=>',
      choice(
        seq(field('value', $._expression), ','),
        field('value', $._expression_ending_with_block),
      ),
    ),

    last_match_arm: $ => seq(
      field('pattern', $._pattern),
      optional(seq('if', field('guard', $._expression))),
      '=>',
      field('value', $._expression),
    ),

    // `for p in xs { .. }`, or `for p in xs with s { .. }` / `with s: T`, which threads `s`.
    for_expression: $ => seq(
      'for',
      field('pattern', $._pattern),
      'in',
      field('value', $._expression),
      optional(field('state', $.loop_state)),
      field('body', $.block),
    ),

    loop_state: $ => seq(
      'with',
      field('name', $.identifier),
      optional(seq(':', field('type', $._type))),
    ),

    // ---- Patterns --------------------------------------------------------------------------

    _pattern: $ => choice(
      $.wildcard,
      $.identifier,
      $.scoped_identifier,
      $.integer_literal,
      $.negative_literal,
      $.string,
      $.boolean_literal,
      $.tuple_pattern,
      $.variant_pattern,
    ),

    wildcard: _ => '_',

    negative_literal: $ => seq('-', $.integer_literal),

    // `()`, `(p)` (which is `p`) and `(p, q, ..)`.
    tuple_pattern: $ => seq('(', commaSep($._pattern), ')'),

    // `Some(p)`, `Enum::Variant(p, ..)`
    variant_pattern: $ => seq(
      field('name', choice($.identifier, $.scoped_identifier)),
      '(',
      commaSep($._pattern),
      ')',
    ),

    // ---- Types -----------------------------------------------------------------------------

    _type: $ => choice(
      $._type_identifier,
      $.generic_type,
      $.tuple_type,
      $.function_type,
      $.refined_type,
    ),

    // `List[T]`, `Result[T, E]`
    // A `[` after a type's name always opens its arguments (types.rs, `named_ty`), even after
    // `as` or at the end of a declaration.
    generic_type: $ => prec(1, seq(
      field('name', $._type_identifier),
      field('arguments', $.type_arguments),
    )),

    type_arguments: $ => seq('[', commaSep($._type), ']'),

    // `()`, `(A)` (which is `A`) and `(A, B)`.
    tuple_type: $ => seq('(', commaSep($._type), ')'),

    // `fn(A, B) -> C`; without `-> C` the result is `()`.
    function_type: $ => prec.right(seq(
      'fn',
      field('parameters', $.function_type_parameters),
      optional(seq('->', field('return_type', $._type))),
    )),

    function_type_parameters: $ => seq('(', commaSep($._type), ')'),

    // `{v: T | p}`
    refined_type: $ => seq(
      '{',
      field('variable', $.identifier),
      ':',
      field('type', $._type),
      '|',
      field('predicate', $._expression),
      '}',
    ),

    // ---- Tokens ----------------------------------------------------------------------------

    identifier: _ => /[a-zA-Z_][a-zA-Z0-9_]*/,

    _type_identifier: $ => alias($.identifier, $.type_identifier),

    _field_identifier: $ => alias($.identifier, $.field_identifier),

    // `//` and `////..` (a ruler); `///` is a doc comment (lexer.rs, `line_comment`).
    line_comment: _ => token(choice(
      '//',
      seq('//', /[^/\n]/, /[^\n]*/),
      seq('////', /[^\n]*/),
    )),

    doc_comment: _ => token(choice(
      '///',
      seq('///', /[^/\n]/, /[^\n]*/),
    )),
  },
});
