; Tag query patterns JavaScript and TypeScript share (same node types in
; both grammars); javascript.scm and typescript.scm add their own.

(function_declaration name: (identifier) @name) @definition.func
(generator_function_declaration name: (identifier) @name) @definition.func
(method_definition name: (_) @name) @definition.func

; Top-level variables; one holding a function is a function.
(program (lexical_declaration (variable_declarator name: (identifier) @name value: [(arrow_function body: (_) @body) (function_expression body: (_) @body) (generator_function body: (_) @body)])) @definition.func)
(export_statement (lexical_declaration (variable_declarator name: (identifier) @name value: [(arrow_function body: (_) @body) (function_expression body: (_) @body) (generator_function body: (_) @body)])) @definition.func)
(program (variable_declaration (variable_declarator name: (identifier) @name value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)])) @definition.func)
(program (lexical_declaration kind: "const" (variable_declarator name: (identifier) @name)) @definition.const)
(export_statement (lexical_declaration kind: "const" (variable_declarator name: (identifier) @name)) @definition.const)
(program (lexical_declaration (variable_declarator name: (identifier) @name)) @definition.var)
(export_statement (lexical_declaration (variable_declarator name: (identifier) @name)) @definition.var)
(program (variable_declaration (variable_declarator name: (identifier) @name)) @definition.var)
(export_statement (variable_declaration (variable_declarator name: (identifier) @name)) @definition.var)

(identifier) @reference
(property_identifier) @reference
(shorthand_property_identifier) @reference
