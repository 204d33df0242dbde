//! Typed methods: a method's name, its params type and its result type, tied together.
//!
//! ```
//! use wsp_protocol::fields::string;
//! use wsp_protocol::method::Method;
//!
//! wsp_protocol::params! {
//!     /// Params of `shout`.
//!     pub struct ShoutParams {
//!         /// What to shout.
//!         pub text: String = string(1, Some(1000)),
//!     }
//! }
//! struct Shout;
//! impl Method for Shout { const NAME: &'static str = "shout"; type Params = ShoutParams; type Result = String; }
//! ```
//!
//! The params type is declared once, as its fields and their [`Field`](crate::fields::Field)
//! rules: its validator and its JSON Schema both come from there; the result's schema comes
//! from its `JsonSchema` derive. [`method!`](crate::method!) declares all three at once.

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

/// Declares a typed method and its params in one place: the method's marker type and its
/// params struct, each field with the rule from [`fields`](crate::fields) named after `=`
/// (`string`, `optional_string`, `string_array`, `optional_bool`, `bool_or_false`,
/// `optional_integer`, `optional_string_map`), which gives both the field's checks and its JSON
/// Schema (see [`params!`](crate::params!)). A field read by an `optional_*` rule may be absent
/// and is an `Option`; any other is required. The params serialize as an object of every field
/// and deserialize through their validator.
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

        $crate::params! {
            #[doc = concat!("The params of `", $wire, "`.")]
            #[derive(Debug, Clone)]
            pub struct $params {
                $(
                    #[doc = concat!("`", stringify!($field), "`.")]
                    pub $field: $ty = $crate::fields::$read($($arg),*),
                )*
            }
        }

        impl $crate::__private::serde::Serialize for $params {
            fn serialize<S>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error>
            where
                S: $crate::__private::serde::Serializer,
            {
                use $crate::__private::serde::ser::SerializeMap as _;
                let mut map = serializer.serialize_map(None)?;
                $(map.serialize_entry(stringify!($field), &self.$field)?;)*
                map.end()
            }
        }

        impl $crate::method::Method for $method {
            const NAME: &'static str = $wire;
            type Params = $params;
            type Result = $result;
        }
    };
}
