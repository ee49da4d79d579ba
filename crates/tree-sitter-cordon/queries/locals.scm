; Scopes, definitions and references, for editors that highlight a name by what it refers to.

[
  (block)
  (function_item)
  (closure_expression)
  (match_arm)
  (for_expression)
] @local.scope

(let_statement
  pattern: (identifier) @local.definition)

(for_expression
  pattern: (identifier) @local.definition)

(match_arm
  pattern: (identifier) @local.definition)

(tuple_pattern
  (identifier) @local.definition)

(variant_pattern
  "("
  (identifier) @local.definition)

(loop_state
  name: (identifier) @local.definition)

(parameter
  name: (identifier) @local.definition)

(closure_parameter
  name: (identifier) @local.definition)

(function_item
  name: (identifier) @local.definition)

(const_item
  name: (identifier) @local.definition)

(identifier) @local.reference
