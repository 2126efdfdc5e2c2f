; Reads of fields from the results of calls: what a composition uses of a
; sub-pattern's result. Used by kit admission (fabdex-kit).

; const reader = MailReader({ db });
(variable_declarator
  name: (identifier) @binding
  value: (call_expression function: (identifier) @callee))

; const { messages, count: n } = MailReader({ db });
(variable_declarator
  name: (object_pattern) @pattern
  value: (call_expression function: (identifier) @callee))

; reader.messages
(member_expression
  object: (identifier) @object
  property: (property_identifier) @property)

; MailReader({ db, month: m }) — keys passed to a call (see `call_arguments`).
(call_expression
  function: (identifier) @call.callee
  arguments: (arguments (object) @call.object))

; <MessageList messages={...} /> — attributes passed to a component.
(jsx_self_closing_element
  name: (identifier) @jsx.callee) @jsx.element
(jsx_opening_element
  name: (identifier) @jsx.callee) @jsx.element
