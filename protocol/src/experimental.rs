//! The experimental params of a method, marked on its params type (docs/protocol.md §4.2): the
//! reference's experimental params Weft serves (they need `capabilities.experimentalApi`) and
//! the ones it refuses as unsupported even with the opt-in. The app-server's gate reads these
//! marks through [`crate::requests::EXPERIMENTAL_PARAMS`]. A leaf: it imports none of the
//! protocol's types, so the params types can implement [`Experimental`] where they are declared.

/// The experimental params of one params type, by wire name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExperimentalParams {
    /// Experimental params Weft serves: fields of the type, still behind `experimentalApi`.
    pub served: &'static [&'static str],
    /// The reference's experimental params Weft does not implement (not fields of the type):
    /// refused without `experimentalApi`, and with it refused as unsupported.
    pub unsupported: &'static [&'static str],
    /// The reference's experimental list params (not fields of the type) whose empty list
    /// (`[]`) is served and any other value is not.
    pub empty_only: &'static [&'static str],
    /// Those of `served` and `unsupported` that are plain booleans in the reference (not
    /// optional): used only when `true`, so `false` (their default) passes the gate, as the
    /// reference's `ExperimentalApi` derive treats a `bool` field.
    pub flags: &'static [&'static str],
}

impl ExperimentalParams {
    /// No experimental params.
    pub const NONE: ExperimentalParams = ExperimentalParams {
        served: &[],
        unsupported: &[],
        empty_only: &[],
        flags: &[],
    };
}

/// A params type some of whose params are experimental in the reference.
pub trait Experimental {
    /// Its experimental params.
    const PARAMS: ExperimentalParams;
}

#[cfg(test)]
mod tests;
