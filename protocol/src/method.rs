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
    CreateParams, DeleteParams, ExecuteParams, GcParams, IdParams, InitializeParams, InstallParams,
    NoParams, UninstallParams,
};
use crate::results::{
    Capabilities, DeleteAck, EnvironmentDetails, EnvironmentSummary, ExecuteResult, GcResult,
    Interpreters,
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
    /// `environment/lock` (an extension beyond WSP 0.1.0).
    Lock = crate::methods::LOCK, IdParams => crate::lock::Lock;
    /// `environment/gc` (an extension beyond WSP 0.1.0).
    Gc = crate::methods::GC, GcParams => GcResult;
    /// `interpreter/list` (an extension beyond WSP 0.1.0).
    InterpreterList = crate::methods::INTERPRETER_LIST, NoParams => Interpreters;
}

/// Declares a typed method and its params in one place: the method's marker type and its
/// params struct, each field with the rule from [`fields`](crate::fields) named after `=`
/// (`string`, `optional_string`, `string_array`, `optional_bool`, `bool_or_false`,
/// `optional_integer`, `optional_string_map`), which gives both the field's checks and its JSON
/// Schema (see [`params!`](crate::params!)). A field read by an `optional_*` rule may be absent
/// and is an `Option`; any other is required. The params serialize as an object of every field
/// and deserialize through their validator.
///
/// The result is any serializable type, or declared in place with its fields (`=> Greeting {
/// text: String }`): a struct that serializes as an object of every field (`None` as `null`),
/// deserializes from one, and has that object's JSON Schema; the crate using the macro needs
/// no serde or schemars of its own.
///
/// ```
/// wsp_protocol::method! {
///     /// `greet`: a name of 1–64 characters and an optional greeting.
///     Greet = "greet", GreetParams {
///         name: String = string(1, Some(64)),
///         greeting: Option<String> = optional_string(1, None),
///     } => String
/// }
/// wsp_protocol::method! {
///     /// `shout`: a text, answered in capitals.
///     Shout = "shout", ShoutParams { text: String = string(1, None) } => Shouted { text: String }
/// }
/// # let shouted: Shouted = serde_json::from_str(r#"{"text":"HI"}"#).unwrap();
/// # assert_eq!(serde_json::to_string(&shouted).unwrap(), r#"{"text":"HI"}"#);
/// ```
#[macro_export]
macro_rules! method {
    (
        $(#[$meta:meta])*
        $method:ident = $wire:expr, $params:ident {
            $($field:ident : $ty:ty = $read:ident ( $($arg:expr),* $(,)? )),* $(,)?
        } => $result:ident { $($result_field:ident : $result_ty:ty),* $(,)? }
    ) => {
        $crate::method! {
            $(#[$meta])*
            $method = $wire, $params {
                $($field : $ty = $read ( $($arg),* )),*
            } => $result
        }
        $crate::result_struct! { $wire, $result { $($result_field : $result_ty),* } }
    };
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

/// The result struct of a [`method!`](crate::method!) that declares its result in place.
#[doc(hidden)]
#[macro_export]
macro_rules! result_struct {
    ($wire:expr, $result:ident { $($field:ident : $ty:ty),* }) => {
        #[doc = concat!("The result of `", $wire, "`.")]
        #[derive(Debug, Clone, PartialEq)]
        pub struct $result {
            $(
                #[doc = concat!("`", stringify!($field), "`.")]
                pub $field: $ty,
            )*
        }

        impl $crate::__private::serde::Serialize for $result {
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

        impl<'de> $crate::__private::serde::Deserialize<'de> for $result {
            fn deserialize<D>(deserializer: D) -> ::std::result::Result<Self, D::Error>
            where
                D: $crate::__private::serde::Deserializer<'de>,
            {
                use $crate::__private::serde::de::Error as _;
                #[allow(unused_mut)]
                let mut object: $crate::__private::serde_json::Map<
                    ::std::string::String,
                    $crate::__private::Value,
                > = $crate::__private::serde::Deserialize::deserialize(deserializer)?;
                ::std::result::Result::Ok($result {
                    $(
                        $field: $crate::__private::serde_json::from_value(
                            object
                                .remove(stringify!($field))
                                .unwrap_or($crate::__private::Value::Null),
                        )
                        .map_err(|e| D::Error::custom(format!("`{}`: {e}", stringify!($field))))?,
                    )*
                })
            }
        }

        impl $crate::__private::schemars::JsonSchema for $result {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(stringify!($result))
            }

            fn json_schema(
                generator: &mut $crate::__private::schemars::SchemaGenerator,
            ) -> $crate::__private::schemars::Schema {
                #[allow(unused_mut)]
                let mut properties = $crate::__private::serde_json::Map::new();
                $(
                    properties.insert(
                        stringify!($field).to_owned(),
                        generator.subschema_for::<$ty>().to_value(),
                    );
                )*
                let required: ::std::vec::Vec<$crate::__private::Value> =
                    ::std::vec![$($crate::__private::Value::from(stringify!($field))),*];
                let mut schema = $crate::__private::serde_json::Map::new();
                schema.insert("type".to_owned(), "object".into());
                schema.insert("properties".to_owned(), properties.into());
                schema.insert("required".to_owned(), required.into());
                $crate::__private::schemars::Schema::from(schema)
            }
        }
    };
}
