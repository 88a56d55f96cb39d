//! Error collection: every stage records its errors here; they are reported together.

use std::cell::RefCell;
use std::fmt::Display;

pub struct Ctxt {
    errors: RefCell<Vec<syn::Error>>,
}

impl Ctxt {
    pub fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Vec::new()),
        }
    }

    pub fn error(&self, span: proc_macro2::Span, msg: impl Display) {
        self.errors.borrow_mut().push(syn::Error::new(span, msg));
    }

    pub fn error_spanned(&self, tokens: impl quote::ToTokens, msg: impl Display) {
        self.errors
            .borrow_mut()
            .push(syn::Error::new_spanned(tokens, msg));
    }

    pub fn syn_error(&self, err: syn::Error) {
        self.errors.borrow_mut().push(err);
    }

    pub fn check(self) -> syn::Result<()> {
        let mut errors = self.errors.into_inner().into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for rest in errors {
            combined.combine(rest);
        }
        Err(combined)
    }
}
