; Tag query for Ruby: definitions and references.

(class name: [(constant) (scope_resolution)] @name) @definition.class
(module name: [(constant) (scope_resolution)] @name) @definition.module
(method name: (_) @name) @definition.func
(singleton_method name: (_) @name) @definition.func
(program (assignment left: (constant) @name) @definition.const)
(body_statement (assignment left: (constant) @name) @definition.const)

(identifier) @reference
(constant) @reference
