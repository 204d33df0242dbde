//! [`params!`](crate::params): a params struct and its [`Params`](crate::Params) impl from one
//! list of fields, each with its [`Field`](crate::fields::Field) rule.

/// Declares a params struct whose validator and JSON Schema both come from its fields' rules.
///
/// Each field is `name: Type = rule`, where `rule` is a [`Field`](crate::fields::Field) whose
/// `Value` is `Type`; fields are read, and their violations listed, in order. An optional
/// `derived { name: Type = expr }` block adds fields computed from the read ones (each bound
/// as an `Option` of its value); a `None` there fails the params. The struct's attributes and
/// the fields' (serde's included) are kept. The struct deserializes through its validator, so
/// what deserializes is what the server accepts; serializing is the caller's to derive.
///
/// ```
/// use wsp_protocol::fields::{optional_integer, string};
///
/// wsp_protocol::params! {
///     /// Params of `sleep`.
///     #[derive(Debug)]
///     pub struct SleepParams {
///         /// Who asks.
///         pub name: String = string(1, Some(64)),
///         /// How long, in milliseconds.
///         pub millis: Option<u64> = optional_integer(1, 60_000),
///     }
/// }
/// # use wsp_protocol::Params;
/// # let ok = SleepParams::from_params(Some(&serde_json::json!({"name": "me"}))).unwrap();
/// # assert_eq!(ok.millis, None);
/// # assert_eq!(SleepParams::schema()["required"], serde_json::json!(["name"]));
/// ```
#[macro_export]
macro_rules! params {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $($(#[$field_meta:meta])* $field_vis:vis $field:ident : $ty:ty = $rule:expr),* $(,)?
        }
        $(derived {
            $($(#[$derived_meta:meta])* $derived_vis:vis $derived:ident : $derived_ty:ty
                = $derive:expr),* $(,)?
        })?
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $($(#[$field_meta])* $field_vis $field: $ty,)*
            $($($(#[$derived_meta])* $derived_vis $derived: $derived_ty,)*)?
        }

        const _: () = {
            use $crate::fields::Field as _;

            fn read(
                mut reader: $crate::validation::ParamReader<'_>,
            ) -> ::std::result::Result<$name, ::std::vec::Vec<$crate::validation::Violation>> {
                $(let $field = ($rule).read(&mut reader, ::std::stringify!($field));)*
                $($(let $derived: ::std::option::Option<$derived_ty> = $derive;)*)?
                reader.finish(|| {
                    ::std::option::Option::Some($name {
                        $($field: $field?,)*
                        $($($derived: $derived?,)*)?
                    })
                })
            }

            impl $crate::validation::Params for $name {
                fn from_params(
                    params: ::std::option::Option<&$crate::__private::Value>,
                ) -> ::std::result::Result<Self, ::std::vec::Vec<$crate::validation::Violation>> {
                    read($crate::validation::ParamReader::new(params, false))
                }

                fn from_request(
                    request: &$crate::message::Request,
                ) -> ::std::result::Result<Self, ::std::vec::Vec<$crate::validation::Violation>> {
                    let params = request.params.as_ref();
                    let reader = $crate::validation::ParamReader::new(params, false)
                        .with_wide_integers(&request.wide_integers);
                    read(reader)
                }

                fn schema() -> $crate::__private::Value {
                    let mut schema = $crate::fields::ObjectSchema::default();
                    $(($rule).describe(::std::stringify!($field), &mut schema);)*
                    schema.into_value()
                }
            }

            impl<'de> $crate::__private::serde::Deserialize<'de> for $name {
                fn deserialize<D>(deserializer: D) -> ::std::result::Result<Self, D::Error>
                where
                    D: $crate::__private::serde::Deserializer<'de>,
                {
                    use $crate::__private::serde::de::Error as _;
                    let value: $crate::__private::Value =
                        $crate::__private::serde::Deserialize::deserialize(deserializer)?;
                    <Self as $crate::validation::Params>::from_params(Some(&value)).map_err(
                        |violations| D::Error::custom($crate::validation::violations_message(&violations)),
                    )
                }
            }
        };
    };
}
