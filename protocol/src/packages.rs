//! Params of `environment/install` and `environment/uninstall`, and the package fields
//! `environment/create` shares with install.

use serde_json::{json, Value};

use crate::message::{Request, WideIntegers};
use crate::progress::ProgressToken;
use crate::validation::{type_name, ParamReader, Params, StringArrayRules, Violation};

/// Most packages one request names.
pub const MAX_PACKAGES: usize = 1000;
/// Most characters of one package (a requirement, a match spec or a name).
pub const MAX_PACKAGE_LENGTH: usize = 1000;
/// Most `find_links` entries one request gives.
pub const MAX_FIND_LINKS: usize = 1000;
/// Most characters of one `find_links` entry or of `index_url`.
pub const MAX_LOCATION_LENGTH: usize = 4096;

/// What [`read_packages`] checks of each package beyond its length, as a JSON Schema pattern:
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
};

const FIND_LINKS: StringArrayRules = StringArrayRules {
    min_items: 0,
    max_items: MAX_FIND_LINKS,
    min_length: 1,
    max_length: MAX_LOCATION_LENGTH,
    format: Some(check_location),
};

/// Where an installer looks for packages, besides the server's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackageSource {
    /// Absolute paths or URLs of directories (or pages) of distributions to look in.
    pub find_links: Vec<String>,
    /// The package index to use instead of the default one.
    pub index_url: Option<String>,
    /// Whether to use no index at all (only `find_links`); `None`: the server's default.
    pub no_index: Option<bool>,
}

impl PackageSource {
    /// Reads `find_links`, `index_url` and `no_index`.
    pub fn read(reader: &mut ParamReader<'_>) -> PackageSource {
        let find_links = reader
            .bounded_string_array("find_links", false, FIND_LINKS)
            .unwrap_or_default();
        reader.constrain(
            "find_links",
            json!({"items": {"type": "string", "minLength": 1, "maxLength": MAX_LOCATION_LENGTH,
                             "pattern": LOCATION_PATTERN}}),
        );
        let index_url = reader.optional_string("index_url", 1, Some(MAX_LOCATION_LENGTH));
        reader.constrain("index_url", json!({ "pattern": URL_PATTERN }));
        if let Some(url) = index_url
            .as_deref()
            .filter(|url| !url.is_empty() && !is_url(url))
        {
            let message = format!("`index_url` must be a URL (scheme://...), got {url:?}");
            reader.violate("index_url", "format", message);
        }
        let no_index = reader.optional_bool("no_index");
        PackageSource {
            find_links,
            index_url,
            no_index,
        }
    }
}

/// Reads a `packages` array (absent or `null` is a violation when `required`): when present,
/// 1–[`MAX_PACKAGES`] strings of 1–[`MAX_PACKAGE_LENGTH`] characters, none starting with `-` (an
/// installer would read it as an option) and none holding control characters.
pub fn read_packages(reader: &mut ParamReader<'_>, required: bool) -> Option<Vec<String>> {
    let packages = reader.bounded_string_array("packages", required, PACKAGES);
    reader.constrain(
        "packages",
        json!({"items": {"type": "string", "minLength": 1, "maxLength": MAX_PACKAGE_LENGTH,
                         "pattern": PACKAGE_PATTERN}}),
    );
    packages
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

/// Reads an optional `work_done_token`: a string or an integer of any size, whose text
/// `wide` holds when a `Value` holds it only as a double (beyond 64 bits, or `-0`).
pub fn read_work_done_token(
    reader: &mut ParamReader<'_>,
    wide: &WideIntegers,
) -> Option<ProgressToken> {
    const NAME: &str = "work_done_token";
    let value = reader.optional_value(NAME, || json!({"type": ["string", "integer", "null"]}))?;
    let token = match wide.get(NAME) {
        Some(text) => ProgressToken::from_integer_text(text),
        None => ProgressToken::from_value(value),
    };
    if token.is_none() {
        let message = format!(
            "`work_done_token` must be a string or an integer, got {}",
            type_name(value)
        );
        reader.violate("work_done_token", "type", message);
    }
    token
}

/// `environment/install` params.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallParams {
    /// The environment's id.
    pub id: String,
    /// PEP 508 requirements (venv, uv) or conda match specs (conda).
    pub packages: Vec<String>,
    /// Where to look for them.
    pub source: PackageSource,
    /// Install the newest versions that satisfy the requirements, even when a matching one is
    /// installed.
    pub upgrade: bool,
    /// The token `$/progress` notifications name.
    pub work_done_token: Option<ProgressToken>,
}

impl Params for InstallParams {
    fn from_params(params: Option<&Value>) -> Result<Self, Vec<Violation>> {
        InstallParams::read(params, &WideIntegers::default())
    }

    fn from_request(request: &Request) -> Result<Self, Vec<Violation>> {
        InstallParams::read(request.params.as_ref(), &request.wide_integers)
    }
}

impl InstallParams {
    fn read(params: Option<&Value>, wide: &WideIntegers) -> Result<Self, Vec<Violation>> {
        let mut reader = ParamReader::new(params, false);
        let id = reader.string("id", 1, None);
        let packages = read_packages(&mut reader, true);
        let source = PackageSource::read(&mut reader);
        let upgrade = reader.optional_bool("upgrade").unwrap_or(false);
        let work_done_token = read_work_done_token(&mut reader, wide);
        reader.finish(|| {
            Some(InstallParams {
                id: id?,
                packages: packages?,
                source,
                upgrade,
                work_done_token,
            })
        })
    }
}

/// `environment/uninstall` params.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UninstallParams {
    /// The environment's id.
    pub id: String,
    /// The names of the packages to remove; names that are not installed are ignored.
    pub packages: Vec<String>,
}

impl Params for UninstallParams {
    fn from_params(params: Option<&Value>) -> Result<Self, Vec<Violation>> {
        let mut reader = ParamReader::new(params, false);
        let id = reader.string("id", 1, None);
        let packages = read_packages(&mut reader, true);
        reader.finish(|| {
            Some(UninstallParams {
                id: id?,
                packages: packages?,
            })
        })
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
