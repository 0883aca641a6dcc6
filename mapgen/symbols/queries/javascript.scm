; Tag query for JavaScript (and JSX), after ecmascript.scm.

(class_declaration name: (identifier) @name) @definition.class
(field_definition property: (_) @name) @definition.field
