; Query for Python's references and imports; definitions are read by
; python.go, which follows the grammar by hand (decorators, docstrings,
; class-level assignments).

(identifier) @reference
(import_statement) @import
(import_from_statement) @import
