; Top-level definitions of a TypeScript/TSX file, exported or not, for the
; error-tolerant outline (fabdex-ts `outline`). Each match captures the whole
; definition (@definition.<kind>) and its name (@name).

(program (function_declaration name: (identifier) @name) @definition.function)
(program (generator_function_declaration name: (identifier) @name) @definition.function)
(program (class_declaration name: (type_identifier) @name) @definition.class)
(program (abstract_class_declaration name: (type_identifier) @name) @definition.class)
(program (interface_declaration name: (type_identifier) @name) @definition.interface)
(program (type_alias_declaration name: (type_identifier) @name) @definition.type)
(program (enum_declaration name: (identifier) @name) @definition.enum)
(program (lexical_declaration (variable_declarator name: (identifier) @name)) @definition.const)
(program (variable_declaration (variable_declarator name: (identifier) @name)) @definition.const)

(program (export_statement declaration: (function_declaration name: (identifier) @name)) @definition.function)
(program (export_statement declaration: (class_declaration name: (type_identifier) @name)) @definition.class)
(program (export_statement declaration: (abstract_class_declaration name: (type_identifier) @name)) @definition.class)
(program (export_statement declaration: (interface_declaration name: (type_identifier) @name)) @definition.interface)
(program (export_statement declaration: (type_alias_declaration name: (type_identifier) @name)) @definition.type)
(program (export_statement declaration: (enum_declaration name: (identifier) @name)) @definition.enum)
(program (export_statement declaration: (lexical_declaration (variable_declarator name: (identifier) @name))) @definition.const)

; Imports: the module specifier.
(import_statement source: (string (string_fragment) @import.source)) @import
