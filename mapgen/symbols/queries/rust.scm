; Tag query for Rust: definitions and references.

(function_item name: (identifier) @name) @definition.func
(function_signature_item name: (identifier) @name) @definition.func
(struct_item name: (type_identifier) @name) @definition.struct
(union_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(enum_variant name: (identifier) @name) @definition.variant
(trait_item name: (type_identifier) @name) @definition.trait
(type_item name: (type_identifier) @name) @definition.type
(associated_type name: (type_identifier) @name) @definition.type
(const_item name: (identifier) @name) @definition.const
(static_item name: (identifier) @name) @definition.var
(mod_item name: (identifier) @name) @definition.module
(macro_definition name: (identifier) @name . (macro_rule)? @body) @definition.macro
(field_declaration_list (field_declaration name: (field_identifier) @name) @definition.field)

; An impl block is named by the type it is for.
(impl_item type: (type_identifier) @name) @definition.impl
(impl_item type: (generic_type type: (type_identifier) @name)) @definition.impl
(impl_item type: (scoped_type_identifier name: (type_identifier) @name)) @definition.impl

(identifier) @reference
(type_identifier) @reference
(field_identifier) @reference
