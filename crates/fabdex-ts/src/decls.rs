//! The type declarations a program's files make, as the schema generator
//! and the literal-order proxy both look them up by name.

use swc_ecma_ast::{TsEnumDecl, TsInterfaceDecl, TsTypeAliasDecl};

/// A type declaration found in a program file (the interface's and the
/// alias's file index, for resolving the names they use).
#[derive(Clone, Copy)]
pub(crate) enum DeclRef<'a> {
    Interface(usize, &'a TsInterfaceDecl),
    Alias(usize, &'a TsTypeAliasDecl),
    Enum(&'a TsEnumDecl),
}
