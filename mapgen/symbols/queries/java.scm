; Tag query for Java: definitions and references.

(package_declaration [(identifier) (scoped_identifier)] @package)

(class_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.class
(annotation_type_declaration name: (identifier) @name) @definition.interface
(enum_constant name: (identifier) @name) @definition.variant
(method_declaration name: (identifier) @name) @definition.func
(constructor_declaration name: (identifier) @name) @definition.ctor
(annotation_type_element_declaration name: (identifier) @name) @definition.func
(field_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.field
(constant_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.const

(identifier) @reference
(type_identifier) @reference
