//! Params of `environment/install` and `environment/uninstall`, and the package fields
//! `environment/create` shares with install.

use serde::Serialize;
use serde_json::json;

use crate::fields::{bool_or_false, string, Field, ObjectSchema, StringList};
use crate::progress::ProgressToken;
use crate::validation::{type_name, ParamReader, StringArrayRules};

/// Most packages one request names.
pub const MAX_PACKAGES: usize = 1000;
/// Most characters of one package (a requirement, a match spec or a name).
pub const MAX_PACKAGE_LENGTH: usize = 1000;
/// Most `find_links` entries one request gives.
pub const MAX_FIND_LINKS: usize = 1000;
/// Most characters of one `find_links` entry or of `index_url`.
pub const MAX_LOCATION_LENGTH: usize = 4096;

/// What [`packages`] checks of each package beyond its length, as a JSON Schema pattern:
/// no leading `-`, no control characters.
const PACKAGE_PATTERN: &str =
    "^[^-\\u0000-\\u001f\\u007f-\\u009f][^\\u0000-\\u001f\\u007f-\\u009f]*$";
/// A URL: `scheme://` and something after it.
const URL_PATTERN: &str = "^[A-Za-z][A-Za-z0-9+.-]*://[\\s\\S]";
/// An absolute path or a URL.
const LOCATION_PATTERN: &str = "^(/|[A-Za-z][A-Za-z0-9+.-]*://[\\s\\S])";

const PACKAGES: StringArrayRules = StringArrayRules {
    min_items: 1,
    max_items: MAX_PACKAGES,
    min_length: 1,
    max_length: MAX_PACKAGE_LENGTH,
    format: Some(check_package),
    pattern: Some(PACKAGE_PATTERN),
};

const FIND_LINKS: StringArrayRules = StringArrayRules {
    min_items: 0,
    max_items: MAX_FIND_LINKS,
    min_length: 1,
    max_length: MAX_LOCATION_LENGTH,
    format: Some(check_location),
    pattern: Some(LOCATION_PATTERN),
};

/// A `packages` array (absent or `null` is a violation when `required`): when present,
/// 1–[`MAX_PACKAGES`] strings of 1–[`MAX_PACKAGE_LENGTH`] characters, none starting with `-` (an
/// installer would read it as an option) and none holding control characters.
pub const fn packages(required: bool) -> StringList {
    StringList {
        required,
        rules: PACKAGES,
    }
}

/// Where an installer looks for packages, besides the server's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PackageSource {
    /// Absolute paths or URLs of directories (or pages) of distributions to look in.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub find_links: Vec<String>,
    /// The package index to use instead of the default one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_url: Option<String>,
    /// Whether to use no index at all (only `find_links`); `None`: the server's default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_index: Option<bool>,
}

/// The rule of [`PackageSource`]'s fields: `find_links`, `index_url` and `no_index`, which
/// stand beside the other params rather than in an object of their own.
#[derive(Debug, Clone, Copy)]
pub struct Source;

const INDEX_URL: crate::fields::OptionalText =
    crate::fields::optional_string(1, Some(MAX_LOCATION_LENGTH))
        .pattern(URL_PATTERN)
        .check(check_index_url);

const FIND_LINKS_FIELD: StringList = StringList {
    required: false,
    rules: FIND_LINKS,
};

impl Field for Source {
    type Value = PackageSource;

    fn describe(&self, _: &'static str, schema: &mut ObjectSchema) {
        FIND_LINKS_FIELD.describe("find_links", schema);
        INDEX_URL.describe("index_url", schema);
        crate::fields::optional_bool().describe("no_index", schema);
    }

    fn read(&self, reader: &mut ParamReader<'_>, _: &'static str) -> Option<PackageSource> {
        Some(PackageSource {
            find_links: FIND_LINKS_FIELD.read(reader, "find_links")?,
            index_url: INDEX_URL.read(reader, "index_url")?,
            no_index: reader.optional_bool("no_index"),
        })
    }
}

fn check_index_url(url: &str) -> Result<(), (&'static str, String)> {
    if url.is_empty() || is_url(url) {
        Ok(())
    } else {
        let message = format!("`index_url` must be a URL (scheme://...), got {url:?}");
        Err(("format", message))
    }
}

fn check_package(package: &str) -> Result<(), String> {
    if package.starts_with('-') {
        Err(format!("must not start with `-`, got {package:?}"))
    } else if package.chars().any(char::is_control) {
        Err("must not contain control characters".to_owned())
    } else {
        Ok(())
    }
}

fn check_location(location: &str) -> Result<(), String> {
    if is_absolute_path(location) || is_url(location) {
        Ok(())
    } else {
        Err(format!(
            "must be an absolute path or a URL, got {location:?}"
        ))
    }
}

/// An optional `work_done_token`: a string or an integer of any size, whose text the reader's
/// wide integers hold when a `Value` holds it only as a double (beyond 64 bits, or `-0`).
#[derive(Debug, Clone, Copy)]
pub struct WorkDoneToken;

impl Field for WorkDoneToken {
    type Value = Option<ProgressToken>;

    fn describe(&self, name: &'static str, schema: &mut ObjectSchema) {
        schema.property(name, false, json!({"type": ["string", "integer", "null"]}));
    }

    fn read(&self, reader: &mut ParamReader<'_>, name: &'static str) -> Option<Self::Value> {
        let Some(value) = reader.optional_value(name) else {
            return Some(None);
        };
        let token = match reader.wide_integer(name) {
            Some(text) => ProgressToken::from_integer_text(text),
            None => ProgressToken::from_value(value),
        };
        if token.is_none() {
            let message = format!(
                "`{name}` must be a string or an integer, got {}",
                type_name(value)
            );
            reader.violate(name, "type", message);
        }
        Some(token)
    }
}

crate::params! {
    /// `environment/install` params.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize)]
    pub struct InstallParams {
        /// The environment's id.
        pub id: String = string(1, None),
        /// PEP 508 requirements (venv, uv) or conda match specs (conda).
        pub packages: Vec<String> = packages(true),
        /// Where to look for them.
        #[serde(flatten)]
        pub source: PackageSource = Source,
        /// Install the newest versions that satisfy the requirements, even when a matching one
        /// is installed.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        pub upgrade: bool = bool_or_false(),
        /// The token `$/progress` notifications name.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub work_done_token: Option<ProgressToken> = WorkDoneToken,
    }
}

crate::params! {
    /// `environment/uninstall` params.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize)]
    pub struct UninstallParams {
        /// The environment's id.
        pub id: String = string(1, None),
        /// The names of the packages to remove; names that are not installed are ignored.
        pub packages: Vec<String> = packages(true),
    }
}

fn is_absolute_path(text: &str) -> bool {
    text.starts_with('/')
}

/// `scheme://...` with an RFC 3986 scheme.
fn is_url(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once("://") else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && !rest.is_empty()
}
