//! The pieces of schema generation shared by [`crate::schema`] and the modules that declare
//! the wire types: the generator settings, the registry the method tables add their root
//! types to, and the schemas of special fields. A leaf: it imports none of the protocol's
//! types, so `schema` depends on the method tables and never the other way round.

use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::{JsonSchema, Schema};

/// Schema of a required-but-nullable string field (`{"type": ["string", "null"]}`).
pub(crate) fn nullable_string(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({ "type": ["string", "null"] })
}

/// The settings every schema is generated with (draft-07).
pub(crate) fn settings() -> SchemaSettings {
    SchemaSettings::draft07()
}

fn root_schema<T: JsonSchema>() -> Schema {
    settings().into_generator().into_root_schema_for::<T>()
}

fn sub_schema<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// One root type and the file it is written to.
pub(crate) struct Root {
    /// The file, relative to the output directory.
    pub(crate) path: String,
    /// The type's schema as a file of its own.
    pub(crate) root: fn() -> Schema,
    /// Adds the type's definitions to a shared generator (for the bundle).
    pub(crate) sub: fn(&mut SchemaGenerator) -> Schema,
}

/// The list of root types and the file each one is written to.
#[derive(Default)]
pub(crate) struct Roots {
    entries: Vec<Root>,
}

impl Roots {
    /// Registers `T` to be written to `path`.
    pub(crate) fn add<T: JsonSchema>(&mut self, path: &str) {
        self.entries.push(Root {
            path: path.to_owned(),
            root: root_schema::<T>,
            sub: sub_schema::<T>,
        });
    }

    /// Registers a method's params and result as `<dir>/<params>.json` and
    /// `<dir>/<response>.json` (at the top when `dir` is empty). A method without params
    /// (`NoParams`) has no params file, as in the reference.
    pub(crate) fn add_method<P: JsonSchema, R: JsonSchema>(
        &mut self,
        dir: &str,
        params: &str,
        response: &str,
    ) {
        let file = |name: &str| match dir {
            "" => format!("{name}.json"),
            dir => format!("{dir}/{name}.json"),
        };
        if params != "NoParams" {
            self.add::<P>(&file(params));
        }
        self.add::<R>(&file(response));
    }

    /// The registered types, in registration order.
    pub(crate) fn entries(&self) -> &[Root] {
        &self.entries
    }
}
