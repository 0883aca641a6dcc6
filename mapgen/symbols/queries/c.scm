; Tag query for C: definitions and references.

(function_definition declarator: (_) @name.declarator) @definition.func
(translation_unit (declaration declarator: (_) @name.declarator) @definition.var)
(preproc_ifdef (declaration declarator: (_) @name.declarator) @definition.var)
(linkage_specification body: (declaration_list (declaration declarator: (_) @name.declarator) @definition.var))
(struct_specifier name: (type_identifier) @name body: (_)) @definition.struct
(union_specifier name: (type_identifier) @name body: (_)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (_)) @definition.enum
(enumerator name: (identifier) @name) @definition.variant
(type_definition type: (_ body: (_) @body) declarator: (_) @name.declarator) @definition.type
(type_definition declarator: (_) @name.declarator) @definition.type
(field_declaration_list (field_declaration declarator: (_) @name.declarator) @definition.field)
(preproc_def name: (identifier) @name) @definition.macro
(preproc_function_def name: (identifier) @name) @definition.macro

(identifier) @reference
(type_identifier) @reference
(field_identifier) @reference
