; Tag query for TypeScript and TSX, after ecmascript.scm.

(function_signature name: (identifier) @name) @definition.func
(class_declaration name: (type_identifier) @name) @definition.class
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(interface_declaration name: (type_identifier) @name) @definition.interface
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
(enum_body name: (property_identifier) @name @definition.variant)
(enum_body (enum_assignment name: (property_identifier) @name) @definition.variant)
(internal_module name: (_) @name) @definition.module
(module name: (_) @name) @definition.module
(method_signature name: (_) @name) @definition.func
(abstract_method_signature name: (_) @name) @definition.func
(public_field_definition name: (_) @name) @definition.field
(property_signature name: (_) @name) @definition.field
(internal_module body: (statement_block (lexical_declaration (variable_declarator name: (identifier) @name)) @definition.var))

(type_identifier) @reference
