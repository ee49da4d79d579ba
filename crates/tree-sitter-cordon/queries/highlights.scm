; Cordon's syntax highlighting. The capture names are nvim-treesitter's; Helix and Zed read them
; too, and an editor without `keyword.conditional` falls back to `keyword`. No two patterns give
; one node different names where it matters, so the order of the patterns does not (Neovim lets
; the last match win, Helix the first).

; Comments

(line_comment) @comment

(block_comment) @comment

(doc_comment) @comment.documentation

; Literals

(string) @string

(format_string
  [
    "f\""
    "\""
  ] @string)

(string_content) @string

(escape_sequence) @string.escape

(integer_literal) @number

(decimal_literal) @number

(float_literal) @number.float

(boolean_literal) @boolean

; Types

(type_identifier) @type

; Declarations and calls

(function_item
  name: (identifier) @function)

(tool_declaration
  name: (identifier) @function)

(measure_item
  name: (identifier) @function)

(call_expression
  function: (identifier) @function.call
  (#match? @function.call "^[a-z_]"))

(method_call_expression
  method: (identifier) @function.method.call)

(parameter
  name: (identifier) @variable.parameter)

(closure_parameter
  name: (identifier) @variable.parameter)

(loop_state
  name: (identifier) @variable)

(const_item
  name: (identifier) @constant)

(enum_variant
  name: (identifier) @constructor)

(scoped_identifier
  name: (identifier) @constructor)

(variant_pattern
  name: (identifier) @constructor)

((identifier) @constructor
  (#any-of? @constructor "Some" "None" "Ok" "Err"))

(field_identifier) @property

(field_index) @property

(shorthand_field_initializer
  (identifier) @property)

(annotation
  "@" @attribute
  name: (identifier) @attribute)

(annotation_argument
  name: (identifier) @variable.parameter)

(wildcard) @variable.builtin

; Keywords

[
  "type"
  "opaque"
  "linear"
  "enum"
  "measure"
  "capability"
  "const"
  "entry"
  "release"
  "to"
  "let"
  "agent"
  "to_labeled"
] @keyword

[
  "fn"
  "tool"
] @keyword.function

[
  "if"
  "else"
  "match"
] @keyword.conditional

[
  "for"
  "in"
  "with"
] @keyword.repeat

"as" @keyword.operator

; Operators and punctuation

[
  "+"
  "-"
  "*"
  "/"
  "%"
  "=="
  "!="
  "<"
  "<="
  ">"
  ">="
  "&&"
  "||"
  "!"
  "="
  "=>"
  "->"
] @operator

[
  "("
  ")"
  "["
  "]"
  "{"
  "}"
] @punctuation.bracket

[
  ","
  ";"
  ":"
  "::"
  "."
  "|"
] @punctuation.delimiter

(interpolation
  [
    "{"
    "}"
  ] @punctuation.special)
