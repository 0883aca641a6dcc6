; Tag query for Bash: definitions and references.

(function_definition name: (word) @name) @definition.func
(program (variable_assignment name: (variable_name) @name) @definition.var)
(program (declaration_command (variable_assignment name: (variable_name) @name)) @definition.var)

(command_name (word) @reference)
(variable_name) @reference
