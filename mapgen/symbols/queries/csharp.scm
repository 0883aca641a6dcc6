; Tag query for C#: definitions and references.

(file_scoped_namespace_declaration name: (_) @package)
(namespace_declaration name: (_) @name) @definition.module
(class_declaration name: (identifier) @name) @definition.class
(struct_declaration name: (identifier) @name) @definition.struct
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.class
(enum_member_declaration name: (identifier) @name) @definition.variant
(delegate_declaration name: (identifier) @name) @definition.type
(method_declaration name: (identifier) @name) @definition.func
(constructor_declaration name: (identifier) @name) @definition.ctor
(destructor_declaration name: (identifier) @name) @definition.func
(property_declaration name: (identifier) @name) @definition.property
(event_declaration name: (identifier) @name) @definition.property
(event_field_declaration (variable_declaration (variable_declarator name: (identifier) @name))) @definition.property
(field_declaration (variable_declaration (variable_declarator name: (identifier) @name))) @definition.field

(identifier) @reference
