//! Typed methods: a method's name, its params type and its result type, tied together.
//!
//! ```
//! use serde_json::Value;
//! use wsp_protocol::method::Method;
//! use wsp_protocol::{ParamReader, Params, Violation};
//!
//! struct Shout;
//! struct ShoutParams { text: String }
//! impl Method for Shout { const NAME: &'static str = "shout"; type Params = ShoutParams; type Result = String; }
//! impl Params for ShoutParams {
//!     fn from_params(p: Option<&Value>) -> Result<Self, Vec<Violation>> {
//!         let mut reader = ParamReader::new(p, false);
//!         let text = reader.string("text", 1, Some(1000));
//!         reader.finish(|| Some(ShoutParams { text: text? }))
//!     }
//! }
//! ```
//!
//! The params type is declared once, in `from_params`: its validator and its JSON Schema both
//! come from there (see [`crate::validation::recorded_schema`]); the result's schema comes from
//! its `JsonSchema` derive.

use schemars::JsonSchema;
use serde::Serialize;

use crate::params::{
    CreateParams, DeleteParams, ExecuteParams, IdParams, InitializeParams, InstallParams, NoParams,
    UninstallParams,
};
use crate::results::{
    Capabilities, DeleteAck, EnvironmentDetails, EnvironmentSummary, ExecuteResult,
};
use crate::validation::Params;

/// A request method.
pub trait Method {
    /// The method's name on the wire.
    const NAME: &'static str;
    /// Its params, validated before the handler runs.
    type Params: Params;
    /// What it answers.
    type Result: Serialize + JsonSchema;
}

macro_rules! methods {
    ($($(#[$doc:meta])* $name:ident = $wire:expr, $params:ty => $result:ty;)*) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, Copy)]
            pub struct $name;

            impl Method for $name {
                const NAME: &'static str = $wire;
                type Params = $params;
                type Result = $result;
            }
        )*
    };
}

methods! {
    /// `initialize`.
    Initialize = crate::methods::INITIALIZE, InitializeParams => Capabilities;
    /// `shutdown`.
    Shutdown = crate::methods::SHUTDOWN, NoParams => ();
    /// `environment/list`.
    List = crate::methods::LIST, NoParams => Vec<EnvironmentSummary>;
    /// `environment/create`.
    Create = crate::methods::CREATE, CreateParams => EnvironmentDetails;
    /// `environment/get`.
    Get = crate::methods::GET, IdParams => EnvironmentDetails;
    /// `environment/delete`.
    Delete = crate::methods::DELETE, DeleteParams => DeleteAck;
    /// `environment/execute`.
    Execute = crate::methods::EXECUTE, ExecuteParams => ExecuteResult;
    /// `environment/install` (an extension beyond WSP 0.1.0).
    Install = crate::methods::INSTALL, InstallParams => EnvironmentDetails;
    /// `environment/uninstall` (an extension beyond WSP 0.1.0).
    Uninstall = crate::methods::UNINSTALL, UninstallParams => EnvironmentDetails;
}

/// Declares a typed method and its params in one place: the method's marker type, its params
/// struct, and the params' validator (each field read by the [`ParamReader`] method named
/// after `=`, so the JSON Schema is recorded from the same line). A field read by an
/// `optional_*` method may be absent; any other is required.
///
/// ```
/// # use schemars::JsonSchema;
/// # use serde::Serialize;
/// wsp_protocol::method! {
///     /// `greet`: a name of 1–64 characters and an optional greeting.
///     Greet = "greet", GreetParams {
///         name: String = string(1, Some(64)),
///         greeting: Option<String> = optional_string(1, None),
///     } => String
/// }
/// ```
///
/// [`ParamReader`]: crate::validation::ParamReader
#[macro_export]
macro_rules! method {
    (
        $(#[$meta:meta])*
        $method:ident = $wire:expr, $params:ident {
            $($field:ident : $ty:ty = $read:ident ( $($arg:expr),* $(,)? )),* $(,)?
        } => $result:ty
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy)]
        pub struct $method;

        #[doc = concat!("The params of `", $wire, "`.")]
        #[derive(Debug, Clone)]
        pub struct $params {
            $(
                #[doc = concat!("`", stringify!($field), "`.")]
                pub $field: $ty,
            )*
        }

        impl $crate::method::Method for $method {
            const NAME: &'static str = $wire;
            type Params = $params;
            type Result = $result;
        }

        impl $crate::validation::Params for $params {
            fn from_params(
                params: Option<&$crate::method::__private::Value>,
            ) -> Result<Self, Vec<$crate::validation::Violation>> {
                let mut reader = $crate::validation::ParamReader::new(params, false);
                $(let $field = reader.$read(stringify!($field), $($arg),*);)*
                reader.finish(|| Some($params { $($field: $crate::__method_field!($read $field)),* }))
            }
        }
    };
}

/// What [`method!`]'s expansion names, so that a crate using it needs no dependency of its own.
#[doc(hidden)]
pub mod __private {
    pub use serde_json::Value;
}

/// A field's value in [`method!`]'s validator: as read for an `optional_*` reader, required
/// (`None` fails the params) for any other.
#[doc(hidden)]
#[macro_export]
macro_rules! __method_field {
    (optional_string $field:ident) => {
        $field
    };
    (optional_bool $field:ident) => {
        $field
    };
    (optional_integer $field:ident) => {
        $field
    };
    (optional_string_map $field:ident) => {
        $field
    };
    ($read:ident $field:ident) => {
        $field?
    };
}
