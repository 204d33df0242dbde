//! The environment variables that tell a command which environments it runs in.

/// The variable naming the environment a command runs in.
pub const ENVIRONMENT_ID_VAR: &str = "WSP_ENVIRONMENT_ID";

/// The variable listing, `:`-separated and outermost first, the environment of every
/// `environment/execute` enclosing a command, its own included.
pub const ENVIRONMENT_STACK_VAR: &str = "WSP_ENVIRONMENT_STACK";

/// The environment ids in a [`ENVIRONMENT_STACK_VAR`] value; empty entries are skipped.
pub fn parse_stack(value: &str) -> Vec<String> {
    value
        .split(':')
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The ids in this process's own [`ENVIRONMENT_STACK_VAR`]: the environments this server is
/// itself running inside (empty when it is not).
pub fn current_stack() -> Vec<String> {
    std::env::var_os(ENVIRONMENT_STACK_VAR)
        .map(|value| parse_stack(&value.to_string_lossy()))
        .unwrap_or_default()
}

/// The [`ENVIRONMENT_STACK_VAR`] value for a command in environment `id`, nested inside
/// `inherited`.
pub fn stack_value(inherited: &[String], id: &str) -> String {
    let mut ids: Vec<&str> = inherited.iter().map(String::as_str).collect();
    ids.push(id);
    ids.join(":")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_values_parse_and_join() {
        assert_eq!(parse_stack(""), Vec::<String>::new());
        assert_eq!(parse_stack("a::b:"), vec!["a", "b"]);
        assert_eq!(stack_value(&[], "x"), "x");
        assert_eq!(stack_value(&["a".into(), "b".into()], "x"), "a:b:x");
    }
}
